/*
 * format.c — the graph root: the `_graph/format.json` stamp, opening a graph (refusing
 * missing, unknown or newer storage versions with a message saying what to do), creating one
 * (init: stamp, first schema, genesis commit, main's create entry), and the handle itself.
 *
 * Init is ordered so that an interruption anywhere is harmless: the stamp is created with
 * put_if_absent (an identical existing stamp is accepted, so a crashed init can simply be run
 * again), the schema and genesis commit are immutable, and main's create entry — the publish
 * — is a put_if_absent that exactly one init can win.  A graph is initialised iff main has a
 * log; init on such a graph is OG_ERR_ALREADY_EXISTS.
 */
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "util/error.h"
#include "util/fault.h"

#define FORMAT_KEY "_graph/format.json"
#define FORMAT_NAME "omnigraph"

static og_status format_bytes(og_buf *b)
{
    return og_buf_printf(b, "{\"format\":\"%s\",\"storage_version\":%d}", FORMAT_NAME, OG_STORAGE_VERSION);
}

static og_status check_format(og_store *st)
{
    og_bytes b = {0};
    og_status s = og_store_get(st, FORMAT_KEY, &b);
    if (s == OG_ERR_NOT_FOUND)
        return og_err(OG_ERR_NOT_FOUND,
                      "no OmniGraph graph at %s: %s is missing (create one with `omnigraph init`; if this was a "
                      "graph, its format stamp was removed and it cannot be opened safely)",
                      og_store_uri(st), FORMAT_KEY);
    if (s != OG_OK) return og_err_wrap(s, "reading %s", FORMAT_KEY);
    json_error_t jerr;
    json_t *o = json_loadb((const char *)b.data, b.len, 0, &jerr);
    og_bytes_free(&b);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return og_err(OG_ERR_CORRUPT, "%s at %s is corrupt: not a JSON object; the graph cannot be opened",
                      FORMAT_KEY, og_store_uri(st));
    }
    json_t *fmt = json_object_get(o, "format"), *ver = json_object_get(o, "storage_version");
    og_status r = OG_OK;
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), FORMAT_NAME) != 0) {
        r = og_err(OG_ERR_UNSUPPORTED_VERSION, "%s at %s does not describe an OmniGraph graph (\"format\" is not \"%s\")",
                   FORMAT_KEY, og_store_uri(st), FORMAT_NAME);
    } else if (!json_is_integer(ver)) {
        r = og_err(OG_ERR_UNSUPPORTED_VERSION,
                   "%s at %s has no numeric storage_version; this build reads storage version %d only", FORMAT_KEY,
                   og_store_uri(st), OG_STORAGE_VERSION);
    } else if (json_integer_value(ver) > OG_STORAGE_VERSION) {
        r = og_err(OG_ERR_UNSUPPORTED_VERSION,
                   "graph at %s uses storage version %lld, newer than this build's %d: upgrade omnigraph to open it",
                   og_store_uri(st), (long long)json_integer_value(ver), OG_STORAGE_VERSION);
    } else if (json_integer_value(ver) != OG_STORAGE_VERSION) {
        r = og_err(OG_ERR_UNSUPPORTED_VERSION,
                   "graph at %s uses unknown storage version %lld (this build reads version %d only; export it "
                   "with the release that wrote it, then init and load with this one)",
                   og_store_uri(st), (long long)json_integer_value(ver), OG_STORAGE_VERSION);
    }
    json_decref(o);
    return r;
}

static og_status handle_new(og_graph **out, og_store *st, const og_graph_opts *opts)
{
    og_graph *g = calloc(1, sizeof *g);
    if (!g) return og_err(OG_ERR_NOMEM, "out of memory opening graph");
    g->store = st;
    size_t cache_bytes = opts && opts->cache_bytes ? opts->cache_bytes : OG_GRAPH_DEFAULT_CACHE_BYTES;
    g->max_attempts = opts && opts->max_attempts > 0 ? opts->max_attempts : 0;
    g->retry_ms = opts && opts->retry_ms > 0 ? opts->retry_ms : OG_GRAPH_RETRY_MS;
    g->backoff_base_ms = opts && opts->backoff_base_ms ? opts->backoff_base_ms : 2;
    g->backoff_max_ms = opts && opts->backoff_max_ms ? opts->backoff_max_ms : 200;
    g->use_hint = opts ? opts->use_hint : 0;
    g->max_plan_ms = opts && opts->max_plan_ms > 0 ? opts->max_plan_ms : OG_GRAPH_MAX_PLAN_MS;
    g->step_hook = opts ? opts->step_hook : NULL;
    g->step_hook_arg = opts ? opts->step_hook_arg : NULL;
    pthread_mutex_init(&g->lock, NULL);
    og_status s = og_cache_new(&g->cache, cache_bytes);
    if (s != OG_OK) {
        pthread_mutex_destroy(&g->lock);
        free(g);
        return s;
    }
    *out = g;
    return OG_OK;
}

void og_graph_close(og_graph *g)
{
    if (!g) return;
    og_cache_free(g->cache);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

void og_graph_step(og_graph *g, const char *point)
{
    og_fault_point(point);
    if (g->step_hook) g->step_hook(point, g->step_hook_arg);
}

og_store *og_graph_store(og_graph *g) { return g->store; }
og_cache *og_graph_cache(og_graph *g) { return g->cache; }

og_status og_graph_open(og_graph **out, og_store *st, const og_graph_opts *opts)
{
    *out = NULL;
    OG_TRY(check_format(st));
    og_graph *g;
    OG_TRY(handle_new(&g, st, opts));
    og_ref_entry main_head;
    int found = 0;
    og_status s = og_graph_head_lookup(g, "main", &main_head, &found);
    if (s == OG_OK && !found)
        s = og_err(OG_ERR_NOT_FOUND,
                   "graph at %s has a format stamp but branch main has no log: its init was interrupted; run "
                   "`omnigraph init` again to finish it",
                   og_store_uri(st));
    if (s != OG_OK) {
        og_graph_close(g);
        return s;
    }
    *out = g;
    return OG_OK;
}

og_status og_graph_init(og_graph **out, og_store *st, const og_graph_init_opts *init, const og_graph_opts *opts)
{
    *out = NULL;
    if (!init || !init->schema) return og_err(OG_ERR_INVALID, "init needs the schema bytes");
    const char *actor = init->actor ? init->actor : "omnigraph";
    if (!og_actor_valid(actor)) return og_err(OG_ERR_INVALID, "invalid actor name");
    for (size_t i = 0; i < init->ntables; i++) {
        if (!og_table_dir_valid(init->tables[i].dir))
            return og_err(OG_ERR_INVALID, "init: \"%s\" is not a valid table directory",
                          init->tables[i].dir ? init->tables[i].dir : "");
        for (size_t j = 0; j < i; j++)
            if (strcmp(init->tables[i].dir, init->tables[j].dir) == 0)
                return og_err(OG_ERR_INVALID, "init: table %s is listed twice", init->tables[i].dir);
    }

    og_buf fb = OG_BUF_INIT;
    OG_TRY(format_bytes(&fb));
    og_status s = og_store_put_if_absent(st, FORMAT_KEY, fb.data, fb.len);
    og_buf_free(&fb);
    if (s == OG_ERR_ALREADY_EXISTS) s = check_format(st); /* ours from an interrupted init, or foreign */
    if (s != OG_OK) return s;

    og_graph *g;
    OG_TRY(handle_new(&g, st, opts));
    og_ref_entry head;
    int found = 0;
    s = og_graph_head_lookup(g, "main", &head, &found);
    if (s == OG_OK && found)
        s = og_err(OG_ERR_ALREADY_EXISTS, "a graph is already initialised at %s (branch main exists)", og_store_uri(st));

    og_commit c;
    memset(&c, 0, sizeof c);
    if (s == OG_OK) s = og_graph_schema_put(g, init->schema, init->schema_len, c.schema);
    if (s == OG_OK) s = og_ulid_new(c.id);
    if (s == OG_OK && init->ntables) {
        c.tables = calloc(init->ntables, sizeof *c.tables);
        if (!c.tables) s = og_err(OG_ERR_NOMEM, "out of memory in init");
        for (size_t i = 0; s == OG_OK && i < init->ntables; i++) {
            og_table_ref r = init->tables[i];
            r.dir = strdup(r.dir);
            if (!r.dir) {
                s = og_err(OG_ERR_NOMEM, "out of memory in init");
                break;
            }
            size_t j = c.ntables; /* insertion sort by dir */
            while (j > 0 && strcmp(c.tables[j - 1].dir, r.dir) > 0) {
                c.tables[j] = c.tables[j - 1];
                j--;
            }
            c.tables[j] = r;
            c.ntables++;
        }
    }
    if (s == OG_OK) {
        c.kind = OG_OP_INIT;
        c.actor = strdup(actor);
        c.message = og_strdup_or_null(init->message);
        og_format_time_ms(og_now_ms(), c.created_at);
        if (!c.actor || (init->message && !c.message)) s = og_err(OG_ERR_NOMEM, "out of memory in init");
    }
    if (s == OG_OK) s = og_graph_commit_write(g, &c);
    if (s == OG_OK) {
        og_ref_entry e;
        memset(&e, 0, sizeof e);
        e.seq = 1;
        strcpy(e.branch, "main");
        e.kind = OG_REF_CREATE;
        strcpy(e.commit, c.id);
        snprintf(e.actor, sizeof e.actor, "%s", actor);
        memcpy(e.at, c.created_at, sizeof e.at);
        s = og_ulid_new(e.incarnation);
        if (s == OG_OK) s = og_graph_publish_entry(g, &e);
        if (s == OG_ERR_ALREADY_EXISTS)
            s = og_err(OG_ERR_ALREADY_EXISTS, "a graph is already initialised at %s (another init won)",
                       og_store_uri(st));
    }
    og_commit_clear(&c);
    if (s != OG_OK) {
        og_graph_close(g);
        return s;
    }
    *out = g;
    return OG_OK;
}
