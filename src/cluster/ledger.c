/*
 * ledger.c — the applied-state ledger, the operation lock and the catalog keys of a cluster's
 * storage root.
 *
 * Why one object per revision: the store's only arbitration is put-if-absent (store.h), so a
 * compare-and-swap on "state_revision N -> N+1" is "create __cluster/state/<N+1>.json if
 * absent".  Of two applies that both read revision N exactly one creates N+1; the other gets
 * OG_ERR_CONFLICT and has recorded nothing (its catalog blobs are content-addressed and inert).
 * __cluster/state.json is written after a win as a convenience copy; readers never trust it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/internal.h"
#include "util/error.h"
#include "util/id.h"

static void rev_key(char *out, size_t cap, long long rev)
{
    snprintf(out, cap, OG_CLUSTER_STATE_PREFIX "%020lld.json", rev);
}

og_status og_ledger_read(og_store *st, json_t **state, long long *revision)
{
    *state = NULL;
    *revision = 0;
    og_keylist kl = {0};
    OG_TRY(og_store_list(st, OG_CLUSTER_STATE_PREFIX, NULL, 0, &kl));
    const char *last = NULL;
    for (size_t i = 0; i < kl.count; i++) {
        const char *k = kl.keys[i] + strlen(OG_CLUSTER_STATE_PREFIX);
        if (strlen(k) == 25 && !strcmp(k + 20, ".json")) last = kl.keys[i];
    }
    if (!last) {
        og_keylist_free(&kl);
        return OG_OK;
    }
    og_bytes b = {0};
    og_status s = og_store_get(st, last, &b);
    if (s != OG_OK) {
        og_keylist_free(&kl);
        return s;
    }
    json_error_t je;
    json_t *j = json_loadb((const char *)b.data, b.len, 0, &je);
    og_bytes_free(&b);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        s = og_err(OG_ERR_CORRUPT, "cluster ledger %s is not a JSON object", last);
        og_keylist_free(&kl);
        return s;
    }
    *revision = atoll(last + strlen(OG_CLUSTER_STATE_PREFIX));
    og_keylist_free(&kl);
    *state = j;
    return OG_OK;
}

og_status og_ledger_publish(og_store *st, json_t *state, long long expected)
{
    json_object_set_new(state, "state_revision", json_integer(expected + 1));
    char *text = json_dumps(state, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (!text) return og_err(OG_ERR_NOMEM, "out of memory");
    char key[128];
    rev_key(key, sizeof key, expected + 1);
    og_status s = og_store_put_if_absent(st, key, text, strlen(text));
    if (s == OG_ERR_ALREADY_EXISTS) {
        free(text);
        return og_err(OG_ERR_CONFLICT,
                      "cluster state changed concurrently: revision %lld was published by another operation; "
                      "nothing was recorded by this one (re-run plan and apply)",
                      expected + 1);
    }
    if (s == OG_OK) (void)og_store_put(st, OG_CLUSTER_STATE_COPY, text, strlen(text));
    free(text);
    return s;
}

json_t *og_lock_read(og_store *st)
{
    og_bytes b = {0};
    if (og_store_get(st, OG_CLUSTER_LOCK, &b) != OG_OK) return NULL;
    json_t *j = json_loadb((const char *)b.data, b.len, 0, NULL);
    og_bytes_free(&b);
    if (!j) j = json_pack("{ss}", "lock_id", "<unreadable lock file>");
    return j;
}

og_status og_lock_acquire(og_store *st, const char *operation, char lock_id_out[32], json_t **holder)
{
    *holder = NULL;
    char id[OG_ULID_LEN + 1], at[25];
    OG_TRY(og_ulid_new(id));
    og_format_time_ms(og_now_ms(), at);
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    json_t *j = json_pack("{ss ss ss sI ss}", "lock_id", id, "operation", operation, "created_at", at, "pid",
                          (json_int_t)getpid(), "host", host);
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!text) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status s = og_store_put_if_absent(st, OG_CLUSTER_LOCK, text, strlen(text));
    free(text);
    if (s == OG_ERR_ALREADY_EXISTS) {
        json_t *h = og_lock_read(st);
        *holder = h;
        const char *hid = json_string_value(json_object_get(h, "lock_id"));
        const char *hop = json_string_value(json_object_get(h, "operation"));
        const char *hat = json_string_value(json_object_get(h, "created_at"));
        return og_err(OG_ERR_CONFLICT,
                      "state_locked: the cluster is locked by %s (operation %s, since %s); if no cluster operation is "
                      "running, remove it with `omnigraph cluster force-unlock %s`",
                      hid ? hid : "?", hop ? hop : "?", hat ? hat : "?", hid ? hid : "<id>");
    }
    if (s != OG_OK) return s;
    snprintf(lock_id_out, 32, "%s", id);
    return OG_OK;
}

void og_lock_release(og_store *st, const char *lock_id)
{
    json_t *h = og_lock_read(st);
    const char *hid = json_string_value(json_object_get(h, "lock_id"));
    if (hid && !strcmp(hid, lock_id)) (void)og_store_delete(st, OG_CLUSTER_LOCK);
    json_decref(h);
}

void og_catalog_key(char *out, size_t cap, const char *kind, const char *graph, const char *name, const char *digest)
{
    if (!strcmp(kind, "query"))
        snprintf(out, cap, "__cluster/resources/query/%s/%s/%s.gq", graph, name, digest);
    else
        snprintf(out, cap, "__cluster/resources/policy/%s/%s.yaml", name, digest);
}

void og_cluster_graph_root(char *out, size_t cap, const char *storage_root, const char *id)
{
    size_t n = strlen(storage_root);
    snprintf(out, cap, "%s%sgraphs/%s.omni", storage_root, n && storage_root[n - 1] == '/' ? "" : "/", id);
}

og_status og_cluster_db_open(og_db **out, const char *uri, const og_open_opts *opts)
{
    *out = NULL;
    /* opening a local store creates its directory: probe first, so a read leaves nothing */
    if (!strstr(uri, "://") || !strncmp(uri, "file://", 7)) {
        struct stat sb;
        const char *path = strncmp(uri, "file://", 7) ? uri : uri + 7;
        if (stat(path, &sb) != 0) return og_err(OG_ERR_NOT_FOUND, "no graph at %s", uri);
    }
    return og_db_open(out, uri, opts);
}
