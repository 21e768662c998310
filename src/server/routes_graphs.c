/*
 * routes_graphs.c — graphs created and deleted while the server runs (an OmniGraph-C
 * extension, docs/server.md "Graphs created through the API"):
 *
 *   POST   /graphs             {graph_id, schema_source} → a new graph under --graph-dir
 *   DELETE /graphs/{graph_id}  a graph created so → closed and its directory removed
 *
 * Why: `omnigraph test --server` runs each logic case on a fresh graph, as the embedded runner
 * does, instead of resetting one scratch graph between cases (docs/testing.md).  The reference
 * has no such routes (its graphs come from an applied cluster), so they answer only when the
 * operator opted in with --graph-dir DIR; otherwise they are refused with that fix.  Boot
 * graphs can never be deleted.  Each is decided as `admin` on the graph concerned.
 *
 * Requests hold a reference on their graph while --graph-dir is set (http.c, under
 * graphs_mu), so a deletion never closes a handle a running request uses: the graph turns
 * `dead` (found by no lookup), and its last request closes it and removes its directory.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/server_int.h"
#include "util/error.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Closes a dead graph whose last reference is gone and removes its directory (under
 * graphs_mu); its slot can then be reused. */
static void reclaim(og_served_graph *g)
{
    char *dir = g->uri ? strdup(g->uri) : NULL;
    og_served_graph_release(g);
    if (dir) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
    memset(g, 0, sizeof *g);
}

void og_server_graph_unref(og_server *s, og_served_graph *g)
{
    pthread_mutex_lock(&s->graphs_mu);
    if (g->refs) g->refs--;
    if (g->dead && !g->refs && g->db) reclaim(g);
    pthread_mutex_unlock(&s->graphs_mu);
}

static struct MHD_Response *refuse_off(og_req *r)
{
    og_err(OG_ERR_UNSUPPORTED, "this server does not create or delete graphs: start omnigraph-server with "
                               "--graph-dir DIR to allow it (or run the cases on a scratch graph: --graph ID --yes)");
    return og_resp_status(r, OG_ERR_UNSUPPORTED);
}

struct MHD_Response *og_h_graph_create(og_req *r)
{
    if (!r->s->graphs_dynamic) return refuse_off(r);
    const char *key;
    json_t *v;
    json_object_foreach(r->json, key, v) if (strcmp(key, "graph_id") && strcmp(key, "schema_source"))
        return og_bad(r, "unknown field '%s'", key);
    int bad = 0;
    const char *id = og_req_str(r, "graph_id", &bad);
    const char *schema = bad ? NULL : og_req_str(r, "schema_source", &bad);
    if (bad || !id || !schema) return og_bad(r, "%s", "fields 'graph_id' and 'schema_source' (strings) are required");
    if (!og_graph_id_valid(id))
        return og_bad(r, "invalid graph id '%s' (expected ^[a-zA-Z0-9-]{1,64}$, not a reserved word)", id);
    r->decide_graph = id;
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_ADMIN, NULL, NULL);
    if (deny) return deny;
    og_server *s = r->s;
    size_t plen = strlen(s->o.graph_dir) + strlen(id) + 2;
    char *path = malloc(plen);
    if (!path) return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    snprintf(path, plen, "%s/%s", s->o.graph_dir, id);
    pthread_mutex_lock(&s->graphs_mu);
    og_served_graph *slot = NULL;
    og_status st = OG_OK;
    for (size_t i = 0; i < s->ngraphs; i++) {
        og_served_graph *g = &s->graphs[i];
        if (g->db && !strcmp(g->id, id)) {
            st = og_err(OG_ERR_ALREADY_EXISTS, "graph '%s' already exists%s", id, g->dead ? " (it is being deleted)" : "");
            break;
        }
        if (!g->db && !slot) slot = g; /* a reclaimed slot */
    }
    if (!st && !slot && s->ngraphs < s->graphs_cap) slot = &s->graphs[s->ngraphs];
    if (!st && !slot)
        st = og_err(OG_ERR_LIMIT, "this server holds %d graphs created through the API at most: delete one first",
                    OG_SERVER_CREATED_MAX);
    og_db *db = NULL;
    if (!st) {
        st = og_db_init(&db, path, "schema_source", schema, strlen(schema), NULL);
        if (st) {
            /* the message names the graph, never the server's directory (docs/server.md) */
            char msg[1024];
            const char *m = og_error_message(), *at = strstr(m, path);
            if (at) snprintf(msg, sizeof msg, "%.*sgraph '%s'%s", (int)(at - m), m, id, at + strlen(path));
            else snprintf(msg, sizeof msg, "%s", m);
            og_err(st, "%s", msg);
        }
    }
    og_write_locks *mu = st ? NULL : og_write_locks_new();
    if (!st && !mu) {
        og_db_close(db);
        st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (!st) {
        if (s->o.budget.time_ms || s->o.budget.memory_bytes) og_db_set_budget(db, &s->o.budget);
        og_db_keep_heads(db, 1);
        memset(slot, 0, sizeof *slot);
        snprintf(slot->id, sizeof slot->id, "%s", id);
        slot->uri = path;
        path = NULL;
        slot->db = db;
        slot->locks = mu;
        slot->created = 1;
        if (slot == &s->graphs[s->ngraphs]) s->ngraphs++;
    }
    pthread_mutex_unlock(&s->graphs_mu);
    free(path);
    if (st) return og_resp_status(r, st);
    return og_resp_json(r, 200, json_pack("{s:s,s:s,s:o}", "graph_id", id, "uri", slot->uri, "actor_id",
                                          r->actor ? json_string(r->actor) : json_null()));
}

struct MHD_Response *og_h_graph_delete(og_req *r)
{
    if (!r->s->graphs_dynamic) return refuse_off(r);
    og_served_graph *g = r->g;
    if (!g->created) {
        og_err(OG_ERR_INVALID, "graph '%s' was given at boot: only graphs created through POST /graphs are deleted", g->id);
        return og_resp_status(r, OG_ERR_INVALID);
    }
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_ADMIN, NULL, NULL);
    if (deny) return deny;
    og_server *s = r->s;
    char id[sizeof g->id];
    snprintf(id, sizeof id, "%s", g->id);
    pthread_mutex_lock(&s->graphs_mu);
    g->dead = 1;
    pthread_mutex_unlock(&s->graphs_mu);
    /* this request's own reference goes now: when no other request holds the graph, it is
     * closed and its directory removed before the answer */
    r->g_ref = 0;
    r->g = NULL;
    og_server_graph_unref(s, g);
    return og_resp_json(r, 200, json_pack("{s:s,s:b,s:o}", "graph_id", id, "deleted", 1, "actor_id",
                                          r->actor ? json_string(r->actor) : json_null()));
}
