/*
 * gc.c — what `cleanup` needs from the graph authority (graph.h "maintenance"): an inventory
 * of every branch log and every commit object by listing, and deletion of single log entries
 * and commit objects.  The decisions (retention, grace period, order) are the engine's
 * (src/engine/cleanup.c, docs/maintenance.md); this file only knows the key names.
 *
 * Listing is the point here: the write path never lists history (invariant 15), but cleanup's
 * job is to find what nothing names any more, which only a listing can show.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "util/error.h"

int64_t og_ulid_time_ms(const char *id)
{
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    uint64_t t = 0;
    for (int i = 0; i < 10; i++) {
        const char *p = id[i] ? strchr(alphabet, id[i]) : NULL;
        if (!p) return 0;
        t = (t << 5) | (uint64_t)(p - alphabet);
    }
    return (int64_t)(t & ((1ULL << 48) - 1));
}

void og_graph_logs_free(og_graph_log *l, size_t n)
{
    for (size_t i = 0; l && i < n; i++) free(l[i].entries);
    free(l);
}

/* Parses "<enc>/<20 digits>.json" (the part after _graph/refs/). */
static int parse_ref_rest(const char *rest, char *enc, size_t cap, uint64_t *seq)
{
    const char *slash = strchr(rest, '/');
    if (!slash || (size_t)(slash - rest) >= cap) return 0;
    const char *num = slash + 1;
    if (strlen(num) != 25 || strcmp(num + 20, ".json") != 0) return 0;
    uint64_t inv = 0;
    for (int i = 0; i < 20; i++) {
        if (num[i] < '0' || num[i] > '9') return 0;
        uint64_t d = (uint64_t)(num[i] - '0');
        if (inv > (UINT64_MAX - d) / 10) return 0;
        inv = inv * 10 + d;
    }
    memcpy(enc, rest, (size_t)(slash - rest));
    enc[slash - rest] = '\0';
    *seq = UINT64_MAX - inv;
    return *seq > 0;
}

og_status og_graph_logs_all(og_graph *g, og_graph_log **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    static const char prefix[] = "_graph/refs/";
    og_keylist kl = {0};
    OG_TRY(og_err_wrap(og_store_list(g->store, prefix, NULL, 0, &kl), "cleanup: listing branch logs"));
    og_graph_log *logs = NULL;
    size_t nl = 0, cap = 0;
    og_status st = OG_OK;
    /* Keys come sorted: one branch's entries are contiguous, newest first. */
    for (size_t i = 0; i < kl.count && st == OG_OK; i++) {
        char enc[OG_BRANCH_ENC_MAX + 1], name[OG_BRANCH_MAX + 1];
        uint64_t seq;
        if (!parse_ref_rest(kl.keys[i] + sizeof prefix - 1, enc, sizeof enc, &seq)) continue; /* not ours */
        if (og_branch_decode(enc, name, sizeof name) != OG_OK || og_branch_name_check(name) != OG_OK) {
            og_error_clear();
            continue;
        }
        og_bytes b = {0};
        st = og_store_get(g->store, kl.keys[i], &b);
        if (st == OG_ERR_NOT_FOUND) { /* reclaimed meanwhile by a concurrent cleanup */
            og_error_clear();
            st = OG_OK;
            continue;
        }
        if (st != OG_OK) break;
        og_ref_entry e;
        st = og_ref_entry_decode(b.data, b.len, kl.keys[i], &e);
        og_bytes_free(&b);
        if (st != OG_OK) break;
        if (!nl || strcmp(logs[nl - 1].branch, name) != 0) {
            if (nl == cap) {
                size_t c2 = cap ? cap * 2 : 16;
                og_graph_log *p = realloc(logs, c2 * sizeof *p);
                if (!p) {
                    st = og_err(OG_ERR_NOMEM, "out of memory");
                    break;
                }
                logs = p;
                cap = c2;
            }
            memset(&logs[nl], 0, sizeof logs[nl]);
            snprintf(logs[nl].branch, sizeof logs[nl].branch, "%s", name);
            nl++;
        }
        og_graph_log *l = &logs[nl - 1];
        og_ref_entry *p = realloc(l->entries, (l->n + 1) * sizeof *p);
        if (!p) {
            st = og_err(OG_ERR_NOMEM, "out of memory");
            break;
        }
        l->entries = p;
        l->entries[l->n++] = e;
    }
    og_keylist_free(&kl);
    if (st != OG_OK) {
        og_graph_logs_free(logs, nl);
        return st;
    }
    /* Listed newest first: turn each log ascending. */
    for (size_t i = 0; i < nl; i++) {
        og_graph_log *l = &logs[i];
        for (size_t a = 0, z = l->n ? l->n - 1 : 0; a < z; a++, z--) {
            og_ref_entry t = l->entries[a];
            l->entries[a] = l->entries[z];
            l->entries[z] = t;
        }
    }
    *out = logs;
    *n = nl;
    return OG_OK;
}

og_status og_graph_commit_ids_all(og_graph *g, og_commit_id_list *out)
{
    memset(out, 0, sizeof *out);
    static const char prefix[] = "_graph/commits/";
    og_keylist kl = {0};
    OG_TRY(og_err_wrap(og_store_list(g->store, prefix, NULL, 0, &kl), "cleanup: listing commits"));
    out->ids = calloc(kl.count ? kl.count : 1, sizeof *out->ids);
    if (!out->ids) {
        og_keylist_free(&kl);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < kl.count; i++) {
        const char *rest = kl.keys[i] + sizeof prefix - 1;
        if (strlen(rest) != OG_ULID_LEN + 5 || strcmp(rest + OG_ULID_LEN, ".json") != 0) continue;
        char id[OG_ULID_LEN + 1];
        memcpy(id, rest, OG_ULID_LEN);
        id[OG_ULID_LEN] = '\0';
        if (!og_ulid_valid(id)) continue;
        memcpy(out->ids[out->n++], id, sizeof id);
    }
    og_keylist_free(&kl);
    return OG_OK;
}

void og_commit_id_list_free(og_commit_id_list *l)
{
    free(l->ids);
    memset(l, 0, sizeof *l);
}

/* Deletes key (size into *bytes); an already missing key is not an error and not counted. */
static og_status gc_delete(og_graph *g, const char *key, int dry, uint64_t *bytes, int *deleted)
{
    *deleted = 0;
    uint64_t size = 0;
    og_status st = og_store_head(g->store, key, &size);
    if (st == OG_ERR_NOT_FOUND) {
        og_error_clear();
        return OG_OK;
    }
    if (st != OG_OK) return st;
    if (!dry) {
        st = og_store_delete(g->store, key);
        if (st == OG_ERR_NOT_FOUND) {
            og_error_clear();
            return OG_OK;
        }
        if (st != OG_OK) return og_err_wrap(st, "cleanup: deleting %s", key);
    }
    if (bytes) *bytes += size;
    *deleted = 1;
    return OG_OK;
}

og_status og_graph_gc_delete_entry(og_graph *g, const char *branch, uint64_t seq, int dry, uint64_t *bytes,
                                   int *deleted)
{
    char key[OG_KEY_MAX], ckey[OG_KEY_MAX + 4];
    OG_TRY(og_ref_key(branch, seq, key, sizeof key));
    OG_TRY(gc_delete(g, key, dry, bytes, deleted));
    if (!dry) {
        snprintf(ckey, sizeof ckey, "r:%s", key + 12);
        og_cache_remove(g->cache, ckey);
    }
    return OG_OK;
}

og_status og_graph_gc_delete_commit(og_graph *g, const char *id, int dry, uint64_t *bytes, int *deleted)
{
    char key[64], ckey[40];
    og_commit_key(id, key);
    OG_TRY(gc_delete(g, key, dry, bytes, deleted));
    if (!dry) {
        snprintf(ckey, sizeof ckey, "c:%s", id);
        og_cache_remove(g->cache, ckey);
    }
    return OG_OK;
}
