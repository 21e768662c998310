/*
 * refs.c — branch logs (STORAGE.md §3–§4): log-entry encoding, the publish (put_if_absent
 * of the next entry: the one publication door), and head lookup that costs the same for a
 * branch with ten entries as for one with ten thousand.
 *
 * Head lookup.  Entries are dense (entry s+1 is only ever created by a put_if_absent made
 * after reading s), so the head is the last present seq.  We start from a hint — this
 * handle's memory of the last seq it saw, else `_graph/hints/<b>.json` (overwritten with put
 * after each publish by whoever published) — and probe seq+1, seq+2, seq+4, … with get until
 * one is missing, then bisect.  Hints are never authority: a hint that is missing, corrupt,
 * points at a missing entry or names the wrong branch sends us to one sorted `list` with
 * limit 1 (inverted naming puts the newest entry first).  Once the first missing seq m is
 * found we re-check that the candidate m-1 still exists: cleanup deletes old entries in
 * ascending order and never the newest, so "m-1 present after m was absent" proves m had not
 * been written (rather than written and reclaimed) when we looked.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/internal.h"
#include "graph/origin.h"
#include "util/error.h"
#include "util/fault.h"

static const char *ref_kind_name(og_ref_kind k)
{
    switch (k) {
    case OG_REF_CREATE: return "create";
    case OG_REF_ADVANCE: return "advance";
    case OG_REF_DELETE: return "delete";
    }
    return NULL;
}

og_status og_ref_entry_encode(const og_ref_entry *e, og_buf *out)
{
    const char *kind = ref_kind_name(e->kind);
    if (!kind) return og_err(OG_ERR_INVALID, "branch log entry for %s has no kind", e->branch);
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:s, s:s}", "seq", (json_int_t)e->seq, "branch", e->branch,
                          "incarnation", e->incarnation, "kind", kind, "commit",
                          e->commit[0] ? json_string(e->commit) : json_null(), "previous",
                          e->previous[0] ? json_string(e->previous) : json_null(), "actor", e->actor, "at", e->at);
    /* only a create carries a message, and only when it has one (older entries stay as they were) */
    if (o && e->kind == OG_REF_CREATE && e->message[0]) json_object_set_new(o, "message", json_string(e->message));
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text) return og_err(OG_ERR_NOMEM, "cannot encode branch log entry %s/%" PRIu64, e->branch, e->seq);
    og_status st = og_buf_append_str(out, text);
    free(text);
    return st;
}

static og_status entry_corrupt(const char *what, const char *why)
{
    return og_err(OG_ERR_CORRUPT, "%s is corrupt: %s", what, why);
}

static int copy_str(json_t *v, char *dst, size_t cap)
{
    if (!json_is_string(v)) return 0;
    const char *s = json_string_value(v);
    if (strlen(s) >= cap) return 0;
    strcpy(dst, s);
    return 1;
}

static int copy_id_or_null(json_t *v, char *dst)
{
    dst[0] = '\0';
    if (json_is_null(v)) return 1;
    return copy_str(v, dst, OG_ULID_LEN + 1) && og_ulid_valid(dst);
}

og_status og_ref_entry_decode(const void *data, size_t len, const char *what, og_ref_entry *e)
{
    memset(e, 0, sizeof *e);
    json_error_t jerr;
    json_t *o = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!o) return og_err(OG_ERR_CORRUPT, "%s is corrupt: not valid JSON (%s)", what, jerr.text);
    og_status st = OG_OK;
    json_t *seq = json_object_get(o, "seq"), *kind = json_object_get(o, "kind");
    json_t *commit = json_object_get(o, "commit"), *prev = json_object_get(o, "previous");
    json_t *msg = json_object_get(o, "message"); /* optional: a create's message */
    if (!json_is_object(o)) st = entry_corrupt(what, "not a JSON object");
    else if (!json_is_integer(seq) || json_integer_value(seq) < 1)
        st = entry_corrupt(what, "\"seq\" is missing or not a positive integer");
    else if (!copy_str(json_object_get(o, "branch"), e->branch, sizeof e->branch))
        st = entry_corrupt(what, "\"branch\" is missing or not a string");
    else if (!copy_str(json_object_get(o, "incarnation"), e->incarnation, sizeof e->incarnation) ||
             !og_ulid_valid(e->incarnation))
        st = entry_corrupt(what, "\"incarnation\" is missing or not a ULID");
    else if (!json_is_string(kind))
        st = entry_corrupt(what, "\"kind\" is missing or not a string");
    else if (!commit || !copy_id_or_null(commit, e->commit))
        st = entry_corrupt(what, "\"commit\" is missing or not a commit id or null");
    else if (!prev || !copy_id_or_null(prev, e->previous))
        st = entry_corrupt(what, "\"previous\" is missing or not a commit id or null");
    else if (!copy_str(json_object_get(o, "actor"), e->actor, sizeof e->actor))
        st = entry_corrupt(what, "\"actor\" is missing or not a string");
    else if (!copy_str(json_object_get(o, "at"), e->at, sizeof e->at) || !og_timestamp_valid(e->at))
        st = entry_corrupt(what, "\"at\" is missing or not a timestamp");
    else if (msg && !copy_str(msg, e->message, sizeof e->message))
        st = entry_corrupt(what, "\"message\" is not a string of at most 1024 bytes");
    if (st == OG_OK) {
        e->seq = (uint64_t)json_integer_value(seq);
        const char *k = json_string_value(kind);
        if (strcmp(k, "create") == 0) e->kind = OG_REF_CREATE;
        else if (strcmp(k, "advance") == 0) e->kind = OG_REF_ADVANCE;
        else if (strcmp(k, "delete") == 0) e->kind = OG_REF_DELETE;
        else st = entry_corrupt(what, "\"kind\" is not create, advance or delete");
    }
    if (st == OG_OK) {
        if (e->kind != OG_REF_DELETE && !e->commit[0]) st = entry_corrupt(what, "a create/advance names no commit");
        else if (e->kind == OG_REF_DELETE && e->commit[0]) st = entry_corrupt(what, "a delete names a commit");
        else if (e->kind == OG_REF_ADVANCE && !e->previous[0])
            st = entry_corrupt(what, "an advance names no previous commit");
        else if (e->kind != OG_REF_CREATE && e->message[0])
            st = entry_corrupt(what, "only a create carries a message");
    }
    json_decref(o);
    return st;
}

/* ---- hints ------------------------------------------------------------------------------ */

uint64_t og_graph_hint_get_mem(og_graph *g, const char *branch)
{
    uint64_t seq = 0;
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < OG_MEM_HINTS; i++)
        if (g->hints[i].seq && strcmp(g->hints[i].branch, branch) == 0) {
            seq = g->hints[i].seq;
            g->hints[i].stamp = ++g->hint_clock;
            break;
        }
    pthread_mutex_unlock(&g->lock);
    return seq;
}

void og_graph_hint_note(og_graph *g, const char *branch, uint64_t seq)
{
    pthread_mutex_lock(&g->lock);
    int slot = -1, oldest = 0;
    for (int i = 0; i < OG_MEM_HINTS; i++) {
        if (g->hints[i].seq && strcmp(g->hints[i].branch, branch) == 0) {
            slot = i;
            break;
        }
        if (g->hints[i].stamp < g->hints[oldest].stamp) oldest = i;
    }
    if (slot < 0) {
        slot = oldest;
        snprintf(g->hints[slot].branch, sizeof g->hints[slot].branch, "%s", branch);
        g->hints[slot].seq = 0;
    }
    if (seq > g->hints[slot].seq) g->hints[slot].seq = seq;
    g->hints[slot].stamp = ++g->hint_clock;
    pthread_mutex_unlock(&g->lock);
}

static void hint_key(const char *branch, char *out, size_t cap)
{
    char enc[3 * OG_BRANCH_MAX + 1];
    og_branch_encode(branch, enc);
    snprintf(out, cap, "_graph/hints/%s.json", enc);
}

/* Whether this store keeps hints at all.  A hint saves a reader without one in memory from
 * listing the log, which on a local disk costs O(entries) (a directory read); an object
 * store answers a list with limit 1 in one request, as cheap as reading the hint, and cheaper
 * than the hint plus the probe of its successor — so there the writer skips the hint's put
 * and the reader lists (docs/graph-authority.md §4). */
static int hints_stored(og_graph *g) { return og_store_is_local(g->store); }

/* The stored hint's seq, or 0 when missing or unreadable (never an error: it is a hint). */
static uint64_t hint_read(og_graph *g, const char *branch)
{
    char key[OG_KEY_MAX];
    hint_key(branch, key, sizeof key);
    og_bytes b = {0};
    if (og_store_get(g->store, key, &b) != OG_OK) return 0;
    json_t *o = json_loadb((const char *)b.data, b.len, 0, NULL);
    og_bytes_free(&b);
    uint64_t seq = 0;
    json_t *s = o ? json_object_get(o, "seq") : NULL;
    json_t *br = o ? json_object_get(o, "branch") : NULL;
    if (json_is_integer(s) && json_integer_value(s) > 0 && json_is_string(br) &&
        strcmp(json_string_value(br), branch) == 0)
        seq = (uint64_t)json_integer_value(s);
    json_decref(o);
    return seq;
}

static void hint_write(og_graph *g, const char *branch, uint64_t seq)
{
    char key[OG_KEY_MAX], body[OG_KEY_MAX];
    hint_key(branch, key, sizeof key);
    json_t *o = json_pack("{s:s, s:I}", "branch", branch, "seq", (json_int_t)seq);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text) return;
    snprintf(body, sizeof body, "%s", text);
    free(text);
    /* Best effort, and not flushed: a failed, lost or (after a crash) torn hint only costs
     * the next reader a list, so the publish's acknowledgement does not wait for its two
     * fsyncs (docs/graph-authority.md §4). */
    (void)og_store_put_unsynced(g->store, key, body, strlen(body));
}

/* ---- entry reads ------------------------------------------------------------------------ */

static void entry_free_fn(void *p) { free(p); }

/* Entries are immutable once published: cache them by key (best effort). */
static void entry_cache_insert(og_graph *g, const char *ckey, const og_ref_entry *e)
{
    og_ref_entry *copy = malloc(sizeof *copy);
    og_cache_entry *ce;
    if (!copy) return;
    *copy = *e;
    if (og_cache_put(g->cache, ckey, copy, sizeof *copy, entry_free_fn, &ce) == OG_OK) og_cache_entry_release(ce);
}

/* Reads entry `seq` of `branch` (cached by key).  *found = 0 when absent. */
static og_status entry_get(og_graph *g, const char *branch, uint64_t seq, og_ref_entry *out, int *found)
{
    char key[OG_KEY_MAX], ckey[OG_KEY_MAX + 4];
    *found = 0;
    OG_TRY(og_ref_key(branch, seq, key, sizeof key));
    snprintf(ckey, sizeof ckey, "r:%s", key + 12);
    og_cache_entry *ce = og_cache_get(g->cache, ckey);
    if (ce) {
        *out = *(const og_ref_entry *)og_cache_entry_value(ce);
        og_cache_entry_release(ce);
        *found = 1;
        return OG_OK;
    }
    pthread_mutex_lock(&g->lock);
    g->head_stats.probes++;
    pthread_mutex_unlock(&g->lock);
    og_bytes b = {0};
    og_status st = og_store_get(g->store, key, &b);
    if (st == OG_ERR_NOT_FOUND) {
        og_error_clear();
        return OG_OK;
    }
    if (st != OG_OK) return og_err_wrap(st, "reading branch log entry %s", key);
    st = og_ref_entry_decode(b.data, b.len, key, out);
    og_bytes_free(&b);
    if (st != OG_OK) return st;
    if (out->seq != seq || strcmp(out->branch, branch) != 0)
        return og_err(OG_ERR_CORRUPT, "%s is corrupt: it holds entry %" PRIu64 " of branch \"%s\"", key, out->seq,
                      out->branch);
    entry_cache_insert(g, ckey, out);
    *found = 1;
    return OG_OK;
}

og_status og_branch_origin(og_graph *g, const og_ref_entry *head, og_ref_entry *out)
{
    if (head->kind == OG_REF_CREATE) {
        *out = *head;
        return OG_OK;
    }
    /* seqs [s0, head->seq] hold head's incarnation, s0 its create entry; below s0 lie older
     * incarnations (or nothing, if cleaned up): find s0 by bisection */
    uint64_t lo = 1, hi = head->seq;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        og_ref_entry e;
        int found;
        OG_TRY(entry_get(g, head->branch, mid, &e, &found));
        if (found && !strcmp(e.incarnation, head->incarnation)) hi = mid;
        else lo = mid + 1;
    }
    int found;
    OG_TRY(entry_get(g, head->branch, lo, out, &found));
    if (!found) return og_err(OG_ERR_NOT_FOUND, "branch \"%s\": its create entry is gone", head->branch);
    if (out->kind != OG_REF_CREATE || strcmp(out->incarnation, head->incarnation))
        return og_err(OG_ERR_CORRUPT, "branch \"%s\": entry %" PRIu64 " should create incarnation %s", head->branch, lo,
                      head->incarnation);
    return OG_OK;
}

/* 1 if entry seq is still in the store right now (no cache). */
static og_status entry_exists(og_graph *g, const char *branch, uint64_t seq, int *exists)
{
    char key[OG_KEY_MAX];
    OG_TRY(og_ref_key(branch, seq, key, sizeof key));
    uint64_t size;
    og_status st = og_store_head(g->store, key, &size);
    *exists = st == OG_OK;
    if (st == OG_ERR_NOT_FOUND) {
        og_error_clear();
        return OG_OK;
    }
    return st == OG_OK ? OG_OK : og_err_wrap(st, "probing branch log entry %s", key);
}

/* The newest entry by listing (authoritative at the instant of the list). */
static og_status head_by_list(og_graph *g, const char *branch, og_ref_entry *out, int *found)
{
    char enc[3 * OG_BRANCH_MAX + 1], prefix[OG_KEY_MAX];
    og_branch_encode(branch, enc);
    snprintf(prefix, sizeof prefix, "_graph/refs/%s/", enc);
    pthread_mutex_lock(&g->lock);
    g->head_stats.list_fallbacks++;
    pthread_mutex_unlock(&g->lock);
    for (int tries = 0; tries < 4; tries++) {
        og_keylist kl = {0};
        *found = 0;
        OG_TRY(og_store_list(g->store, prefix, NULL, 1, &kl));
        if (kl.count == 0) {
            og_keylist_free(&kl);
            return OG_OK;
        }
        const char *name = kl.keys[0] + strlen(prefix);
        char *end = NULL;
        unsigned long long inv = strtoull(name, &end, 10);
        int ok = end == name + 20 && strcmp(end, ".json") == 0 && inv != UINT64_MAX;
        og_status st = ok ? OG_OK : og_err(OG_ERR_CORRUPT, "unexpected object %s in a branch log", kl.keys[0]);
        og_keylist_free(&kl);
        if (st != OG_OK) return st;
        OG_TRY(entry_get(g, branch, UINT64_MAX - (uint64_t)inv, out, found));
        if (*found) return OG_OK; /* else reclaimed between list and get: list again */
    }
    return og_err(OG_ERR_IO, "branch log of \"%s\" keeps changing under the lookup", branch);
}

/* How young a candidate head must be for its re-check to be skipped (below). */
#define RECHECK_SKIP_MS (10LL * 60 * 1000)

/* 1 when entry `e` was written less than RECHECK_SKIP_MS ago (by its "at" stamp).  The re-check
 * guards against a successor that was written and then reclaimed by cleanup; cleanup reclaims
 * nothing younger than its grace period, which must be at least 30 minutes while writers run
 * (docs/maintenance.md), and a successor is younger than its predecessor.  So a successor of
 * an entry written under 10 minutes ago cannot have been reclaimed yet (the margin absorbs
 * clock skew between machines), and "successor absent" already proves it was never written. */
static int entry_young(const og_ref_entry *e)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int ms = 0;
    if (sscanf(e->at, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &ms) != 7)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    int64_t at = (int64_t)timegm(&tm) * 1000 + ms;
    int64_t age = og_now_ms() - at;
    return age >= -RECHECK_SKIP_MS && age < RECHECK_SKIP_MS;
}

/* The head by probing the log (the hint, gallop, bisect, re-check; see the top). */
static og_status head_probe(og_graph *g, const char *branch, og_ref_entry *out, int *found)
{
    uint64_t start = g->use_hint >= 0 ? og_graph_hint_get_mem(g, branch) : 0;
    if (!start && g->use_hint >= 0 && hints_stored(g)) start = hint_read(g, branch);
    og_ref_entry cand;
    int have = 0;
    if (start) OG_TRY(entry_get(g, branch, start, &cand, &have));
    if (!have) {
        OG_TRY(head_by_list(g, branch, out, found));
        if (*found) og_graph_hint_note(g, branch, out->seq);
        return OG_OK;
    }
    pthread_mutex_lock(&g->lock);
    g->head_stats.hint_hits++;
    pthread_mutex_unlock(&g->lock);
    /* Gallop: lo is present; find a missing hi. */
    uint64_t lo = cand.seq, step = 1, hi;
    og_ref_entry probe;
    int present;
    for (;;) {
        hi = lo + step;
        OG_TRY(entry_get(g, branch, hi, &probe, &present));
        if (!present) break;
        cand = probe;
        lo = hi;
        if (step < (UINT64_C(1) << 40)) step *= 2;
    }
    /* Bisect (lo present, hi missing). */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        OG_TRY(entry_get(g, branch, mid, &probe, &present));
        if (present) {
            cand = probe;
            lo = mid;
        } else {
            hi = mid;
        }
    }
    int still = entry_young(&cand);
    if (!still) OG_TRY(entry_exists(g, branch, lo, &still));
    if (still) {
        *out = cand;
        *found = 1;
        og_graph_hint_note(g, branch, cand.seq);
        return OG_OK;
    }
    /* Reclaimed under us: ask the log directly. */
    OG_TRY(head_by_list(g, branch, out, found));
    if (*found) og_graph_hint_note(g, branch, out->seq);
    return OG_OK;
}

og_status og_graph_head_entry(og_graph *g, const char *branch, og_ref_entry *out)
{
    OG_TRY(og_branch_name_check(branch));
    int found;
    OG_TRY(og_graph_head_lookup(g, branch, out, &found));
    if (!found) return og_err(OG_ERR_NOT_FOUND, "branch \"%s\" not found", branch);
    return OG_OK;
}

void og_graph_head_stats(og_graph *g, og_head_stats *out)
{
    pthread_mutex_lock(&g->lock);
    *out = g->head_stats;
    pthread_mutex_unlock(&g->lock);
}

/* ---- publish ---------------------------------------------------------------------------- */

og_status og_graph_publish_entry(og_graph *g, const og_ref_entry *e)
{
    char key[OG_KEY_MAX];
    OG_TRY(og_ref_key(e->branch, e->seq, key, sizeof key));
    og_buf b = OG_BUF_INIT;
    OG_TRY(og_ref_entry_encode(e, &b));
    og_status st = og_store_put_if_absent(g->store, key, b.data, b.len);
    if (st != OG_OK && st != OG_ERR_ALREADY_EXISTS) {
        /* Indeterminate (e.g. a timeout after the store applied it): the log decides. */
        og_bytes have = {0};
        if (og_store_get(g->store, key, &have) == OG_OK) {
            int ours = have.len == b.len && memcmp(have.data, b.data, b.len) == 0;
            st = ours ? OG_OK : og_err(OG_ERR_ALREADY_EXISTS, "branch log entry %s already exists", key);
            og_bytes_free(&have);
        } else {
            st = og_err_wrap(st, "publishing branch log entry %s", key);
        }
    } else if (st == OG_ERR_ALREADY_EXISTS) {
        og_err(OG_ERR_ALREADY_EXISTS, "branch \"%s\" moved: log entry %s already exists", e->branch, key);
    }
    og_buf_free(&b);
    if (st != OG_OK) return st;
    char ckey[OG_KEY_MAX + 4];
    snprintf(ckey, sizeof ckey, "r:%s", key + 12);
    entry_cache_insert(g, ckey, e);
    og_graph_hint_note(g, e->branch, e->seq);
    og_graph_step(g, "graph.after_publish");
    /* A log's first entry gets no stored hint: without one a reader lists the log, one
     * request, as reading the hint would have been. */
    if (g->use_hint >= 0 && e->seq > 1 && hints_stored(g)) hint_write(g, e->branch, e->seq);
    return OG_OK;
}

/* ---- kept heads (og_graph_keep_heads) ------------------------------------------------ */

/* The kept head of `branch` if the store's change count has not moved since it was found. */
static int head_kept(og_graph *g, const char *branch, og_ref_entry *out)
{
    uint64_t now = og_store_change_count(g->store);
    int hit = 0;
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < OG_HEAD_SLOTS; i++)
        if (g->heads[i].count && strcmp(g->heads[i].branch, branch) == 0) {
            if (g->heads[i].count == now) {
                *out = g->heads[i].e;
                hit = 1;
                g->head_stats.cache_hits++;
            }
            break;
        }
    pthread_mutex_unlock(&g->lock);
    return hit;
}

/* Watches the branch's log directory and returns the change count read after the watch is in
 * place (so a later change moves it), or 0 when it cannot watch (no keeping this time; for
 * good when the store cannot watch at all). */
static uint64_t head_watch(og_graph *g, const char *branch)
{
    char enc[3 * OG_BRANCH_MAX + 1], prefix[OG_KEY_MAX];
    og_branch_encode(branch, enc);
    snprintf(prefix, sizeof prefix, "_graph/refs/%s/", enc);
    og_status st = og_store_watch(g->store, prefix);
    if (st == OG_OK) return og_store_change_count(g->store);
    og_error_clear(); /* never an error of the lookup: it only costs the next one a probe */
    if (st == OG_ERR_UNSUPPORTED) {
        pthread_mutex_lock(&g->lock);
        g->cache_heads = 0;
        pthread_mutex_unlock(&g->lock);
    }
    return 0;
}

static void head_keep(og_graph *g, const char *branch, const og_ref_entry *e, uint64_t count)
{
    pthread_mutex_lock(&g->lock);
    int slot = -1;
    for (int i = 0; i < OG_HEAD_SLOTS && slot < 0; i++)
        if (g->heads[i].count && strcmp(g->heads[i].branch, branch) == 0) slot = i;
    for (int i = 0; i < OG_HEAD_SLOTS && slot < 0; i++)
        if (!g->heads[i].count) slot = i;
    if (slot < 0) { /* full: the one found longest ago (counts only grow) */
        slot = 0;
        for (int i = 1; i < OG_HEAD_SLOTS; i++)
            if (g->heads[i].count < g->heads[slot].count) slot = i;
    }
    /* a slower lookup that began before a newer one must not replace its answer */
    if (g->heads[slot].count <= count || strcmp(g->heads[slot].branch, branch) != 0) {
        snprintf(g->heads[slot].branch, sizeof g->heads[slot].branch, "%s", branch);
        g->heads[slot].e = *e;
        g->heads[slot].count = count;
    }
    pthread_mutex_unlock(&g->lock);
}

void og_graph_keep_heads(og_graph *g, int on)
{
    pthread_mutex_lock(&g->lock);
    g->cache_heads = on ? 1 : 0;
    if (!on) memset(g->heads, 0, sizeof g->heads);
    pthread_mutex_unlock(&g->lock);
}

og_status og_graph_head_lookup_new(og_graph *g, const char *branch, og_ref_entry *out, int *found)
{
    if (og_graph_hint_get_mem(g, branch)) return og_graph_head_lookup(g, branch, out, found);
    pthread_mutex_lock(&g->lock);
    g->head_stats.lookups++;
    pthread_mutex_unlock(&g->lock);
    OG_TRY(head_by_list(g, branch, out, found));
    if (*found) og_graph_hint_note(g, branch, out->seq);
    return OG_OK;
}

og_status og_graph_head_lookup(og_graph *g, const char *branch, og_ref_entry *out, int *found)
{
    *found = 0;
    pthread_mutex_lock(&g->lock);
    g->head_stats.lookups++;
    int keep = g->cache_heads;
    pthread_mutex_unlock(&g->lock);
    uint64_t count = 0;
    if (keep) {
        if (head_kept(g, branch, out)) {
            *found = 1;
            return OG_OK;
        }
        count = head_watch(g, branch);
    }
    OG_TRY(head_probe(g, branch, out, found));
    if (*found && count) head_keep(g, branch, out, count);
    return OG_OK;
}
