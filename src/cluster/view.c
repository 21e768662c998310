/*
 * view.c — the applied view of a cluster (cluster.h "og_cluster"): what a server or an agent
 * surface serves.  It reads only the ledger and the content-addressed catalog, never the
 * working-tree files: applied means serving, edited-but-unapplied files change nothing.  Each
 * catalog blob is verified against its digest when read.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "cluster/stored.h"
#include "util/buf.h"
#include "util/error.h"

struct og_cluster {
    char *root;
    json_t *state;
    json_t *graph_ids;   /* sorted array of ids */
    json_t *uris;        /* id -> uri */
    json_t *blobs;       /* "query.<g>.<n>" / "policy.<n>" -> text */
    json_t *pending;     /* graph id -> key of a recovery sidecar awaiting its sweep */
};

static og_status storage_root_of(char **out, const char *where)
{
    char cfg[PATH_MAX + 32];
    snprintf(cfg, sizeof cfg, "%s/cluster.yaml", where);
    struct stat sb;
    if (strstr(where, "://") == NULL && stat(cfg, &sb) == 0) {
        og_buf b = OG_BUF_INIT;
        OG_TRY(og_buf_read_file(&b, cfg));
        json_t *diags = json_array(), *doc = NULL;
        og_status st = og_yaml_load(&doc, diags, (const char *)b.data, b.len, "cluster.yaml");
        og_buf_free(&b);
        json_decref(diags);
        if (st != OG_OK) return og_err(OG_ERR_INVALID, "%s/cluster.yaml is not valid YAML", where);
        const char *storage = json_string_value(json_object_get(doc, "storage"));
        char dir[PATH_MAX];
        if (!realpath(where, dir)) snprintf(dir, sizeof dir, "%s", where);
        char buf[PATH_MAX * 2];
        if (!storage) snprintf(buf, sizeof buf, "%s", dir);
        else if (!strncmp(storage, "s3://", 5) || storage[0] == '/') snprintf(buf, sizeof buf, "%s", storage);
        else if (!strncmp(storage, "file://", 7)) snprintf(buf, sizeof buf, "%s", storage + 7);
        else snprintf(buf, sizeof buf, "%s/%s", dir, storage);
        json_decref(doc);
        *out = strdup(buf);
    } else {
        *out = strdup(where);
    }
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

void og_cluster_close(og_cluster *c)
{
    if (!c) return;
    free(c->root);
    json_decref(c->state);
    json_decref(c->graph_ids);
    json_decref(c->uris);
    json_decref(c->blobs);
    json_decref(c->pending);
    free(c);
}

static int cmp_json_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

og_status og_cluster_open(og_cluster **out, const char *where)
{
    *out = NULL;
    og_cluster *c = calloc(1, sizeof *c);
    if (!c) return og_err(OG_ERR_NOMEM, "out of memory");
    og_store *store = NULL;
    long long rev = 0;
    og_status st = storage_root_of(&c->root, where);
    if (st == OG_OK) st = og_store_open(&store, c->root);
    if (st == OG_OK) st = og_ledger_read(store, &c->state, &rev);
    if (st == OG_OK && !c->state)
        st = og_err(OG_ERR_NOT_FOUND, "cluster_state_missing: %s has no applied cluster state; run `omnigraph cluster import` and `omnigraph cluster apply`", c->root);
    c->graph_ids = json_array();
    c->uris = json_object();
    c->blobs = json_object();
    json_t *res = json_object_get(json_object_get(c->state, "applied_revision"), "resources");
    const char *addr;
    json_t *v;
    const char *ids[1024];
    size_t nids = 0;
    json_object_foreach(res, addr, v) {
        if (st != OG_OK) break;
        char key[1024];
        if (!strncmp(addr, "graph.", 6)) {
            if (nids < 1024) ids[nids++] = addr + 6;
            continue;
        }
        const char *digest = json_string_value(json_object_get(v, "digest"));
        if (!strncmp(addr, "query.", 6)) {
            char g[256];
            const char *p = addr + 6, *dot = strchr(p, '.');
            if (!dot || (size_t)(dot - p) >= sizeof g) continue;
            memcpy(g, p, (size_t)(dot - p));
            g[dot - p] = 0;
            og_catalog_key(key, sizeof key, "query", g, dot + 1, digest);
        } else if (!strncmp(addr, "policy.", 7)) {
            og_catalog_key(key, sizeof key, "policy", NULL, addr + 7, digest);
        } else {
            continue;
        }
        og_bytes b = {0};
        st = og_store_get(store, key, &b);
        if (st == OG_ERR_NOT_FOUND) {
            st = og_err(OG_ERR_CORRUPT, "catalog_payload_missing: %s (%s)", key, addr);
        } else if (st == OG_OK) {
            char d2[65];
            og_cluster_digest(d2, b.data, b.len);
            if (strcmp(d2, digest ? digest : "")) st = og_err(OG_ERR_CORRUPT, "catalog_payload_digest_mismatch: %s (%s)", key, addr);
            else json_object_set_new(c->blobs, addr, json_stringn((const char *)b.data, b.len));
        }
        og_bytes_free(&b);
    }
    /* a graph with an interrupted cluster operation is not served until a sweep classifies it
     * (reference: cluster_recovery_pending quarantines the graph at boot) */
    c->pending = json_object();
    og_keylist kl = {0};
    if (st == OG_OK && og_store_list(store, OG_CLUSTER_RECOVERIES, NULL, 0, &kl) == OG_OK) {
        for (size_t i = 0; i < kl.count; i++) {
            og_bytes b = {0};
            json_t *j = NULL;
            if (og_store_get(store, kl.keys[i], &b) == OG_OK) j = json_loadb((const char *)b.data, b.len, 0, NULL);
            og_bytes_free(&b);
            const char *g = json_string_value(json_object_get(j, "graph_id"));
            if (g) json_object_set_new(c->pending, g, json_string(kl.keys[i]));
            json_decref(j);
        }
    }
    og_keylist_free(&kl);
    qsort(ids, nids, sizeof *ids, cmp_json_str);
    for (size_t i = 0; st == OG_OK && i < nids; i++) {
        char uri[4096];
        og_cluster_graph_root(uri, sizeof uri, c->root, ids[i]);
        json_array_append_new(c->graph_ids, json_string(ids[i]));
        json_object_set_new(c->uris, ids[i], json_string(uri));
    }
    og_store_close(store);
    if (st != OG_OK) {
        og_cluster_close(c);
        return st;
    }
    *out = c;
    return OG_OK;
}

size_t og_cluster_graph_count(const og_cluster *c) { return json_array_size(c->graph_ids); }
const char *og_cluster_graph_id(const og_cluster *c, size_t i) { return json_string_value(json_array_get(c->graph_ids, i)); }
const char *og_cluster_graph_uri(const og_cluster *c, const char *graph_id)
{
    return json_string_value(json_object_get(c->uris, graph_id));
}

og_status og_cluster_stored_queries(og_stored_set **out, const og_cluster *c, const char *graph_id, og_db *db)
{
    *out = NULL;
    const char *sidecar = json_string_value(json_object_get(c->pending, graph_id));
    if (sidecar)
        return og_err(OG_ERR_PRECONDITION_FAILED,
                      "cluster_recovery_pending: graph '%s' has an interrupted cluster operation (%s); run `omnigraph "
                      "cluster apply` (or refresh) to classify it, then restart",
                      graph_id, sidecar);
    char *schema = NULL;
    OG_TRY(og_db_schema_source(&schema, db, NULL));
    og_stored_set *set = NULL;
    og_status st = og_stored_set_new(&set);
    json_t *res = json_object_get(json_object_get(c->state, "applied_revision"), "resources");
    char prefix[300];
    snprintf(prefix, sizeof prefix, "query.%s.", graph_id);
    const char *addr;
    json_t *v;
    json_object_foreach(res, addr, v) {
        if (st != OG_OK) break;
        if (strncmp(addr, prefix, strlen(prefix))) continue;
        json_t *text = json_object_get(c->blobs, addr);
        const char *file = json_string_value(json_object_get(v, "file"));
        const char *names[2] = {addr + strlen(prefix), NULL};
        st = og_stored_set_add(set, file ? file : "stored.gq", json_string_value(text), json_string_length(text), names,
                               schema, strlen(schema));
        if (st != OG_OK) st = og_err_wrap(st, "graph '%s'", graph_id);
    }
    og_free(schema);
    if (st != OG_OK) {
        og_stored_set_free(set);
        return st;
    }
    *out = set;
    return OG_OK;
}

og_status og_cluster_embedding_provider(const og_cluster *c, const char *graph_id, og_db_embed_provider *out,
                                        char *key_buf, size_t key_cap, int *bound)
{
    memset(out, 0, sizeof *out);
    *bound = 0;
    if (key_cap) key_buf[0] = 0;
    json_t *res = json_object_get(json_object_get(c->state, "applied_revision"), "resources");
    char addr[300];
    snprintf(addr, sizeof addr, "graph.%s", graph_id);
    const char *ref = json_string_value(json_object_get(json_object_get(res, addr), "embedding_provider"));
    if (!ref) return OG_OK;
    json_t *profile = json_object_get(json_object_get(res, ref), "embedding_profile");
    const char *name = !strncmp(ref, "provider.embedding.", 19) ? ref + 19 : ref;
    if (!json_is_object(profile))
        return og_err(OG_ERR_CORRUPT, "graph '%s': the applied state names embedding provider '%s' but records no "
                                      "profile for it; run `omnigraph cluster apply`", graph_id, name);
    out->kind = json_string_value(json_object_get(profile, "kind"));
    if (!out->kind) out->kind = json_string_value(json_object_get(profile, "provider"));
    out->base_url = json_string_value(json_object_get(profile, "base_url"));
    out->model = json_string_value(json_object_get(profile, "model"));
    const char *key = json_string_value(json_object_get(profile, "api_key"));
    size_t kl = key ? strlen(key) : 0;
    if (kl > 3 && key[0] == '$' && key[1] == '{' && key[kl - 1] == '}') {
        char var[256];
        snprintf(var, sizeof var, "%.*s", (int)(kl - 3), key + 2);
        const char *v = getenv(var);
        if (!v || !*v)
            return og_err(OG_ERR_INVALID, "graph '%s': embedding provider '%s' needs the environment variable %s "
                                          "(api_key: ${%s}), which is not set", graph_id, name, var, var);
        if (strlen(v) >= key_cap) return og_err(OG_ERR_INVALID, "graph '%s': the value of %s is too long", graph_id, var);
        memcpy(key_buf, v, strlen(v) + 1);
        out->api_key = key_buf;
    }
    *bound = 1;
    return OG_OK;
}

const char *og_cluster_policy_text(const og_cluster *c, const char *graph_id)
{
    json_t *res = json_object_get(json_object_get(c->state, "applied_revision"), "resources");
    char want[300];
    if (!strcmp(graph_id, "cluster")) snprintf(want, sizeof want, "cluster");
    else snprintf(want, sizeof want, "graph.%s", graph_id);
    const char *addr;
    json_t *v;
    json_object_foreach(res, addr, v) {
        if (strncmp(addr, "policy.", 7)) continue;
        size_t i;
        json_t *b;
        json_array_foreach(json_object_get(v, "applies_to"), i, b)
            if (!strcmp(json_string_value(b), want)) return json_string_value(json_object_get(c->blobs, addr));
    }
    return NULL;
}
