/*
 * engine.c — the engine handle, init/open, read contexts and read queries.  See engine.h.
 *
 * Catalogs are cached in the graph handle's cache by schema id ("k:<id>"), table views by
 * table version (tableview.h), so a warm read parses no schema and opens no manifest.
 */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/query_check.h"
#include "compiler/schema.h"
#include "engine/layout.h"
#include "engine/tableview.h"
#include "store/store.h"
#include "table/table.h"
#include "util/error.h"

struct og_engine {
    og_store *st;
    og_graph *g;
    char *actor;
    char actor_via[16];
    og_status (*embed)(void *ud, const char *model, const char *text, size_t len, uint32_t dim, float *out);
    void *embed_ud;
};

struct og_compiled {
    og_source src;
    char *text;
    char *file;
    og_query_file *qf;
    og_ir_query *ir;
};

typedef struct null_col {
    og_vector v;
    struct null_col *next;
} null_col;

struct og_read {
    og_engine *e;
    og_snapshot *snap;
    int owns_snap;
    const og_catalog *cat;
    og_cache_entry *cat_hold;
    og_tableview **nodes, **edges;
    null_col *nulls; /* all-null columns for properties a table version lacks */
};

/* ---- errors from the compiler's diagnostics ------------------------------------------------ */

/* "a, b, c" — the query names of a file, for errors that ask the user to pick one. */
static const char *query_names(const og_query_file *qf, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < qf->nqueries && n + 1 < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", qf->queries[i].name);
    if (n >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
    return qf->nqueries ? buf : "(no queries)";
}

static og_status diag_error(const og_diag *d, og_status fallback)
{
    og_buf b = OG_BUF_INIT;
    if (d && d->message && og_diag_format(&b, d) == OG_OK) {
        og_status code = d->code ? d->code : fallback;
        og_err(code, "%s", og_buf_cstr(&b));
        og_buf_free(&b);
        return code;
    }
    og_buf_free(&b);
    return fallback;
}

static og_status diags_error(const og_diags *ds, og_status fallback)
{
    for (size_t i = 0; i < ds->len; i++)
        if (!ds->v[i].warning) return diag_error(&ds->v[i], fallback);
    return fallback;
}

/* ---- handles ------------------------------------------------------------------------------- */

static og_status engine_new(og_engine **out, const char *uri, const og_engine_opts *opts)
{
    og_engine *e = calloc(1, sizeof *e);
    if (!e) return og_err(OG_ERR_NOMEM, "out of memory");
    e->actor = strdup(opts && opts->actor ? opts->actor : "omnigraph");
    if (opts && opts->actor_via && !og_actor_via_valid(opts->actor_via)) {
        free(e->actor);
        free(e);
        return og_err(OG_ERR_INVALID, "unknown actor provenance \"%s\"", opts->actor_via);
    }
    snprintf(e->actor_via, sizeof e->actor_via, "%s", opts && opts->actor_via ? opts->actor_via : "local");
    e->embed = opts ? opts->embed : NULL;
    e->embed_ud = opts ? opts->embed_ud : NULL;
    og_status st = e->actor ? og_store_open(&e->st, uri) : og_err(OG_ERR_NOMEM, "out of memory");
    if (st) {
        free(e->actor);
        free(e);
        return st;
    }
    *out = e;
    return OG_OK;
}

void og_engine_close(og_engine *e)
{
    if (!e) return;
    og_graph_close(e->g);
    og_store_close(e->st);
    free(e->actor);
    free(e);
}

og_graph *og_engine_graph(og_engine *e) { return e->g; }
og_store *og_engine_store(og_engine *e) { return e->st; }
/* The calling thread's actor, when a surface set one for the request it is serving (the
 * server: the actor of the matched bearer token); it wins over the handle's actor. */
static _Thread_local char thread_actor[OG_ACTOR_MAX + 1];
/* ... and how it was established (og_engine_set_thread_actor_via); "" = the handle's. */
static _Thread_local char thread_via[16];

og_status og_engine_set_thread_actor(const char *actor)
{
    if (!actor) {
        thread_actor[0] = thread_via[0] = 0;
        return OG_OK;
    }
    size_t n = strlen(actor);
    int ok = n > 0 && n <= OG_ACTOR_MAX;
    for (size_t i = 0; ok && i < n; i++) ok = (unsigned char)actor[i] >= 0x20 && actor[i] != 0x7f;
    if (!ok) return og_err(OG_ERR_INVALID, "invalid actor name");
    snprintf(thread_actor, sizeof thread_actor, "%s", actor);
    thread_via[0] = 0;
    return OG_OK;
}

const char *og_engine_actor(const og_engine *e) { return thread_actor[0] ? thread_actor : e->actor; }

og_status og_engine_set_thread_actor_via(const char *actor, const char *via)
{
    if (via && !og_actor_via_valid(via)) return og_err(OG_ERR_INVALID, "unknown actor provenance \"%s\"", via);
    OG_TRY(og_engine_set_thread_actor(actor));
    snprintf(thread_via, sizeof thread_via, "%s", via ? via : "");
    return OG_OK;
}

const char *og_engine_actor_via(const og_engine *e) { return thread_via[0] ? thread_via : e->actor_via; }

/* The calling thread's commit message: what a person said about the writes it makes next. */
#define OG_MESSAGE_MAX 4096
static _Thread_local char thread_message[OG_MESSAGE_MAX + 1];
static _Thread_local int thread_message_set;

og_status og_engine_set_thread_message(const char *message)
{
    if (!message) {
        thread_message_set = 0;
        thread_message[0] = 0;
        return OG_OK;
    }
    size_t n = strlen(message);
    if (n > OG_MESSAGE_MAX) return og_err(OG_ERR_INVALID, "a commit message holds at most %d bytes", OG_MESSAGE_MAX);
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)message[i] < 0x20 && message[i] != '\n' && message[i] != '\t') || message[i] == 0x7f)
            return og_err(OG_ERR_INVALID, "a commit message holds no control characters (other than newline and tab)");
    memcpy(thread_message, message, n + 1);
    thread_message_set = 1;
    return OG_OK;
}

const char *og_engine_message(void) { return thread_message_set ? thread_message : NULL; }

static og_graph_opts graph_opts(const og_engine_opts *opts)
{
    og_graph_opts go;
    memset(&go, 0, sizeof go);
    go.cache_bytes = opts ? opts->cache_bytes : 0;
    return go;
}

og_status og_engine_open(og_engine **out, const char *uri, const og_engine_opts *opts)
{
    *out = NULL;
    og_engine *e = NULL;
    OG_TRY(engine_new(&e, uri, opts));
    og_graph_opts go = graph_opts(opts);
    og_status st = og_graph_open(&e->g, e->st, &go);
    if (st) {
        og_engine_close(e);
        return st;
    }
    *out = e;
    return OG_OK;
}

/* Writes version 1 of an empty table for every node and edge type; fills refs. */
static og_status create_tables(og_engine *e, const og_catalog *cat, og_table_ref *refs, char (*dirs)[64])
{
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? cat->nedges : cat->nnodes;
        for (size_t i = 0; i < n; i++, k++) {
            const og_cat_type *t = pass ? &cat->edges[i] : &cat->nodes[i];
            og_cat_type_table_dir(t, dirs[k], sizeof dirs[k]);
            og_lance_schema schema = OG_LANCE_SCHEMA_INIT;
            OG_TRY(og_layout_schema(t, &schema));
            og_table *tab = NULL;
            og_table_txn *x = NULL;
            uint64_t version = 0;
            og_status st = og_table_open(&tab, e->st, dirs[k]);
            if (st == OG_OK) st = og_table_txn_begin(&x, tab, 0, &schema);
            if (st == OG_OK) st = og_table_txn_commit(x, &version);
            og_table_txn_free(x);
            og_table_close(tab);
            og_lance_schema_free(&schema);
            if (st) return og_err_wrap(st, "creating the table of %s", t->name);
            refs[k] = (og_table_ref){dirs[k], version, 0};
        }
    }
    return OG_OK;
}

og_status og_engine_init(og_engine **out, const char *uri, const char *file, const char *schema, size_t len,
                         const og_engine_opts *opts)
{
    *out = NULL;
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&cat, file, schema, len, &d);
    if (st) {
        st = diags_error(&d, st);
        og_diags_free(&d);
        return st;
    }
    og_diags_free(&d);
    og_engine *e = NULL;
    og_buf json = OG_BUF_INIT;
    size_t ntables = cat->nnodes + cat->nedges;
    og_table_ref *refs = calloc(ntables ? ntables : 1, sizeof *refs);
    char(*dirs)[64] = calloc(ntables ? ntables : 1, sizeof *dirs);
    st = refs && dirs ? engine_new(&e, uri, opts) : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        /* refuse early, before writing tables, when a graph is already there */
        og_graph *probe = NULL;
        og_graph_opts go = graph_opts(opts);
        if (og_graph_open(&probe, e->st, &go) == OG_OK) {
            og_graph_close(probe);
            st = og_err(OG_ERR_ALREADY_EXISTS, "a graph already exists at %s", og_store_uri(e->st));
        }
    }
    if (st == OG_OK) st = og_catalog_to_json(&json, cat);
    if (st == OG_OK) st = create_tables(e, cat, refs, dirs);
    if (st == OG_OK) {
        og_graph_init_opts init = {json.data, json.len, refs, ntables, e->actor, NULL};
        og_graph_opts go = graph_opts(opts);
        st = og_graph_init(&e->g, e->st, &init, &go);
    }
    og_buf_free(&json);
    free(refs);
    free(dirs);
    og_catalog_free(cat);
    if (st) {
        og_engine_close(e);
        return st;
    }
    *out = e;
    return OG_OK;
}

/* ---- read contexts ------------------------------------------------------------------------- */

static void free_catalog(void *p) { og_catalog_free(p); }

/* The catalog of the snapshot's schema, from the cache or decoded once. */
static og_status snapshot_catalog(og_engine *e, const og_snapshot *s, const og_catalog **out, og_cache_entry **hold)
{
    og_cache *cache = og_graph_cache(e->g);
    char key[16 + OG_SCHEMA_ID_LEN];
    snprintf(key, sizeof key, "k:%s", og_snapshot_schema_id(s));
    og_cache_entry *h = og_cache_get(cache, key);
    if (!h) {
        const og_bytes *bytes = og_snapshot_schema(s);
        og_catalog *cat;
        OG_TRY(og_catalog_from_json(&cat, (const char *)bytes->data, bytes->len));
        OG_TRY(og_cache_put(cache, key, cat, bytes->len * 4 + 4096, free_catalog, &h));
    }
    *out = og_cache_entry_value(h);
    *hold = h;
    return OG_OK;
}

static og_status read_begin(og_read **out, og_engine *e, const char *branch, const char *commit,
                            const og_snapshot *borrowed)
{
    *out = NULL;
    og_read *r = calloc(1, sizeof *r);
    if (!r) return og_err(OG_ERR_NOMEM, "out of memory");
    r->e = e;
    og_status st = OG_OK;
    if (borrowed) {
        r->snap = (og_snapshot *)borrowed;
    } else {
        r->owns_snap = 1;
        st = commit ? og_graph_snapshot_commit(e->g, commit, &r->snap)
                    : og_graph_snapshot_branch(e->g, branch ? branch : "main", &r->snap);
    }
    if (st == OG_OK) st = snapshot_catalog(e, r->snap, &r->cat, &r->cat_hold);
    if (st == OG_OK) {
        r->nodes = calloc(r->cat->nnodes ? r->cat->nnodes : 1, sizeof *r->nodes);
        r->edges = calloc(r->cat->nedges ? r->cat->nedges : 1, sizeof *r->edges);
        if (!r->nodes || !r->edges) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (st) {
        og_read_end(r);
        return st;
    }
    *out = r;
    return OG_OK;
}

og_status og_read_begin(og_read **out, og_engine *e, const char *branch, const char *commit)
{
    return read_begin(out, e, branch, commit, NULL);
}

og_status og_read_begin_at(og_read **out, og_engine *e, const og_snapshot *snap)
{
    return read_begin(out, e, NULL, NULL, snap);
}

void og_read_end(og_read *r)
{
    if (!r) return;
    if (r->cat) {
        for (size_t i = 0; r->nodes && i < r->cat->nnodes; i++) og_tableview_release(r->nodes[i]);
        for (size_t i = 0; r->edges && i < r->cat->nedges; i++) og_tableview_release(r->edges[i]);
    }
    free(r->nodes);
    free(r->edges);
    while (r->nulls) {
        null_col *n = r->nulls;
        r->nulls = n->next;
        og_vector_free(&n->v);
        free(n);
    }
    og_cache_entry_release(r->cat_hold);
    if (r->owns_snap) og_snapshot_free(r->snap);
    free(r);
}

const og_snapshot *og_read_snapshot(const og_read *r) { return r->snap; }
const og_catalog *og_read_catalog(const og_read *r) { return r->cat; }

static og_status type_view(og_read *r, const og_cat_type *t, og_tableview **slot)
{
    if (*slot) return OG_OK;
    char dir[64];
    og_cat_type_table_dir(t, dir, sizeof dir);
    const og_table_ref *ref = og_snapshot_table(r->snap, dir);
    if (!ref)
        return og_err(OG_ERR_CORRUPT, "commit %s names no table for type %s (%s)", og_snapshot_commit_id(r->snap),
                      t->name, dir);
    og_table *tab;
    OG_TRY(og_table_open(&tab, r->e->st, dir));
    og_table_set_cache(tab, og_graph_cache(r->e->g));
    og_status st = og_tableview_get(og_graph_cache(r->e->g), tab, ref->version, slot);
    if (st == OG_ERR_NOT_FOUND)
        st = og_err_wrap(og_tableview_missing_error(st, tab, ref->version), "commit %s, type %s",
                         og_snapshot_commit_id(r->snap), t->name);
    og_table_close(tab);
    return st;
}

og_status og_read_node_view(og_read *r, size_t node, og_tableview **out)
{
    OG_TRY(type_view(r, &r->cat->nodes[node], &r->nodes[node]));
    *out = r->nodes[node];
    return OG_OK;
}

og_status og_read_edge_view(og_read *r, size_t edge, og_tableview **out)
{
    OG_TRY(type_view(r, &r->cat->edges[edge], &r->edges[edge]));
    *out = r->edges[edge];
    return OG_OK;
}

static og_status src_node_rows(void *ud, size_t node, size_t *n)
{
    og_tableview *v;
    OG_TRY(og_read_node_view(ud, node, &v));
    *n = og_tableview_rows(v);
    return OG_OK;
}

/* The Lance field of a property id, or of a system column (exec.h OG_PROP_*_COLUMN). */
static og_status prop_field(uint64_t prop_id, int32_t *fid)
{
    if (prop_id == OG_PROP_ID_COLUMN) *fid = OG_FIELD_ID;
    else if (prop_id == OG_PROP_SRC_COLUMN) *fid = OG_FIELD_SRC;
    else if (prop_id == OG_PROP_DST_COLUMN) *fid = OG_FIELD_DST;
    else return og_layout_field_id(prop_id, fid);
    return OG_OK;
}

static og_status view_column(og_read *r, og_tableview *v, const og_cat_type *t, uint64_t prop_id,
                             const og_vector **out)
{
    int32_t fid = OG_FIELD_ID;
    OG_TRY(prop_field(prop_id, &fid));
    og_status st = og_tableview_column(v, fid, out);
    if (st != OG_ERR_NOT_FOUND || prop_id == 0 || og_tableview_has_field(v, fid)) return st;
    /* the stored table lacks this property: it reads as null (a field it has whose read
     * failed, e.g. a data file reclaimed by cleanup, stays the error) */
    const og_cat_prop *p = NULL;
    for (size_t i = 0; i < t->nprops; i++)
        if (t->props[i].id == prop_id) p = &t->props[i];
    if (!p) return og_err(OG_ERR_INTERNAL, "type %s has no property id %llu", t->name, (unsigned long long)prop_id);
    null_col *n = calloc(1, sizeof *n);
    if (!n) return og_err(OG_ERR_NOMEM, "out of memory");
    st = og_vector_init(&n->v, p->type);
    for (size_t i = 0; i < og_tableview_rows(v) && st == OG_OK; i++) st = og_vector_append_null(&n->v);
    if (st) {
        og_vector_free(&n->v);
        free(n);
        return st;
    }
    n->next = r->nulls;
    r->nulls = n;
    *out = &n->v;
    return OG_OK;
}

static og_status src_node_column(void *ud, size_t node, uint64_t prop_id, const og_vector **out)
{
    og_read *r = ud;
    og_tableview *v;
    OG_TRY(og_read_node_view(r, node, &v));
    return view_column(r, v, &r->cat->nodes[node], prop_id, out);
}

static og_status src_node_zones(void *ud, size_t node, uint64_t prop_id, const struct og_colzones **out)
{
    og_read *r = ud;
    og_tableview *v;
    int32_t fid = OG_FIELD_ID;
    *out = NULL;
    OG_TRY(prop_field(prop_id, &fid));
    OG_TRY(og_read_node_view(r, node, &v));
    og_status st = og_tableview_zones(v, fid, out);
    if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(v, fid)) { /* a property the stored table lacks: no zones */
        og_error_clear();
        *out = NULL;
        return OG_OK;
    }
    return st;
}

static og_status src_column_dict(void *ud, int is_edge, size_t type, uint64_t prop_id, const struct og_dictcol **out)
{
    og_read *r = ud;
    og_tableview *v;
    int32_t fid = OG_FIELD_ID;
    *out = NULL;
    OG_TRY(prop_field(prop_id, &fid));
    if (is_edge) OG_TRY(og_read_edge_view(r, type, &v));
    else OG_TRY(og_read_node_view(r, type, &v));
    if (!og_tableview_has_field(v, fid)) return OG_OK; /* all null: the column path makes it */
    return og_tableview_dict(v, fid, out);
}

static og_status src_edge_column(void *ud, size_t edge, uint64_t prop_id, const og_vector **out)
{
    og_read *r = ud;
    og_tableview *v;
    OG_TRY(og_read_edge_view(r, edge, &v));
    return view_column(r, v, &r->cat->edges[edge], prop_id, out);
}

static og_status src_edge_topology(void *ud, size_t edge, const og_topology **out)
{
    og_read *r = ud;
    const og_cat_type *et = &r->cat->edges[edge];
    og_tableview *ev, *fv, *tv;
    OG_TRY(og_read_edge_view(r, edge, &ev));
    OG_TRY(og_read_node_view(r, et->from_node, &fv));
    OG_TRY(og_read_node_view(r, et->to_node, &tv));
    /* a read (not a writer's base) leaves what it had to build for the next process */
    return og_tableview_topology_ex(ev, fv, tv, r->owns_snap, out);
}

static og_status src_node_find_id(void *ud, size_t node, const char *id, size_t len, uint32_t *row)
{
    og_read *r = ud;
    og_tableview *v;
    OG_TRY(og_read_node_view(r, node, &v));
    OG_TRY(og_tableview_lookup_id(v, id, len, row));
    /* a read (not a writer's base) leaves the key maps it had to build for the next process */
    if (r->owns_snap && og_tableview_index_mode() == 2) og_tableview_save_keys(v);
    return OG_OK;
}

static og_status src_embed_text(void *ud, const char *model, const char *text, size_t len, uint32_t dim, float *out)
{
    og_engine *e = ((og_read *)ud)->e;
    if (!e->embed)
        return og_err(OG_ERR_UNSUPPORTED, "nearest with a String query needs an embedding provider, and this "
                                          "handle has none; pass a Vector(%u) instead", dim);
    return e->embed(e->embed_ud, model, text, len, dim, out);
}

static og_status src_gather(void *ud, int is_edge, size_t type, uint64_t prop_id, const uint32_t *rows, size_t n,
                            og_vector *out)
{
    og_read *r = ud;
    og_tableview *v;
    if (is_edge) OG_TRY(og_read_edge_view(r, type, &v));
    else OG_TRY(og_read_node_view(r, type, &v));
    int32_t fid = OG_FIELD_ID;
    OG_TRY(prop_field(prop_id, &fid));
    og_status st = og_tableview_gather(v, fid, rows, n, out);
    /* a property the stored table lacks reads as null: the column path knows how */
    if (st == OG_ERR_NOT_FOUND && prop_id != 0 && !og_tableview_has_field(v, fid)) {
        og_error_clear();
        return og_err(OG_ERR_UNSUPPORTED, "use the column");
    }
    return st;
}

/* The fragments of a node view with their index files of `kind` for prop_id (exec.h). */
static og_status src_node_index(void *ud, size_t node, uint64_t prop_id, const char *kind, og_index_frags *out)
{
    og_read *r = ud;
    memset(out, 0, sizeof *out);
    const og_index_def *d = og_index_def_find(kind);
    if (!d) return og_err(OG_ERR_INTERNAL, "no index kind '%s'", kind);
    og_tableview *v;
    OG_TRY(og_read_node_view(r, node, &v));
    int32_t fid = OG_FIELD_ID;
    if (prop_id != 0) OG_TRY(og_layout_field_id(prop_id, &fid));
    const og_manifest *m = og_tableview_manifest(v);
    const uint64_t *addrs = NULL;
    int dels = 0;
    for (size_t i = 0; i < m->nfragments; i++) dels |= m->fragments[i].deletion.present;
    if (dels && og_tableview_rows(v)) OG_TRY(og_tableview_addrs(v, &addrs));
    out->v = calloc(m->nfragments ? m->nfragments : 1, sizeof *out->v);
    if (!out->v) return og_err(OG_ERR_NOMEM, "out of memory");
    out->n = m->nfragments;
    int files = og_tableview_index_mode() > 0;
    size_t at = 0;
    for (size_t i = 0; i < m->nfragments; i++) {
        const og_fragment *f = &m->fragments[i];
        og_index_frag *fr = &out->v[i];
        fr->fragment_id = f->id;
        fr->physical_rows = f->physical_rows;
        fr->view_start = at;
        fr->live_rows = (size_t)og_fragment_live_rows(f);
        fr->addrs = f->deletion.present ? addrs + at : NULL;
        at += fr->live_rows;
        char key[512];
        og_status ks = og_index_file_key(key, sizeof key, og_tableview_dir(v), f, fid, d);
        if (ks == OG_ERR_NOT_FOUND) fr->no_data = 1;
        if (ks == OG_OK && files && og_store_map(r->e->st, key, &fr->file) != OG_OK) fr->file = NULL;
        if (ks == OG_OK && r->owns_snap) { /* a published snapshot: its files are final */
            char del[48] = "-";
            if (f->deletion.present)
                snprintf(del, sizeof del, "%llu-%llu", (unsigned long long)f->deletion.read_version,
                         (unsigned long long)f->deletion.id);
            const char *uri = og_store_uri(r->e->st);
            size_t n = strlen(uri) + strlen(key) + strlen(del) + 3;
            fr->ident = malloc(n);
            if (!fr->ident) {
                og_index_frags_free(out);
                return og_err(OG_ERR_NOMEM, "out of memory");
            }
            snprintf(fr->ident, n, "%s|%s|%s", uri, key, del);
        }
        og_error_clear();
    }
    if (at != og_tableview_rows(v)) {
        og_index_frags_free(out);
        return og_err(OG_ERR_CORRUPT, "table %s: the fragments' live rows do not add up to the view's",
                      og_tableview_dir(v));
    }
    return OG_OK;
}

/* What a one-pass aggregate may load whole (and keep on the view) of the numeric columns it
 * reads before it streams them instead (docs/engine.md "Memory"): a quarter of the handle's
 * cache bound, and at most $OMNIGRAPH_COLUMN_LOAD_MAX (bytes, or with K/M/G; default 32M). */
#define OG_STREAM_CACHE_SHARE 4
#define OG_COLUMN_LOAD_MAX_DEFAULT ((size_t)32 << 20)

static size_t column_load_max(void)
{
    const char *s = getenv("OMNIGRAPH_COLUMN_LOAD_MAX");
    if (!s || !*s) return OG_COLUMN_LOAD_MAX_DEFAULT;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    if (end == s || (shift && end[1]) || (!shift && *end) || v > (SIZE_MAX >> shift)) return OG_COLUMN_LOAD_MAX_DEFAULT;
    return (size_t)v << shift;
}

static og_status src_node_stream_plan(void *ud, size_t node, const uint64_t *prop_ids, size_t n, og_type *types,
                                      int *yes)
{
    og_read *r = ud;
    og_tableview *v;
    *yes = 0;
    OG_TRY(og_read_node_view(r, node, &v));
    size_t rows = og_tableview_rows(v), bytes = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t fid;
        OG_TRY(prop_field(prop_ids[i], &fid));
        if (!og_tableview_has_field(v, fid) || og_tableview_column_loaded(v, fid)) return OG_OK;
        if (og_tableview_field_type(v, fid, &types[i]) != OG_OK) { /* (the usual path reports it) */
            og_error_clear();
            return OG_OK;
        }
        size_t w = og_type_width(types[i]);
        if (!w || types[i].id == OG_T_BOOL) return OG_OK; /* fixed-width numbers and dates only */
        bytes += rows * w;
    }
    og_cache_stats cs;
    og_cache_get_stats(og_graph_cache(r->e->g), &cs);
    size_t most = cs.max_bytes / OG_STREAM_CACHE_SHARE, cap = column_load_max();
    *yes = bytes > (cap < most ? cap : most);
    return OG_OK;
}

typedef og_status (*stream_use_fn)(void *ctx, int part, size_t row0, size_t rows, const og_vector *cols);

static og_status src_node_stream(void *ud, size_t node, const uint64_t *prop_ids, size_t n, int parts,
                                 stream_use_fn use, void *ctx)
{
    og_read *r = ud;
    og_tableview *v;
    OG_TRY(og_read_node_view(r, node, &v));
    int32_t fids[16];
    if (n > sizeof fids / sizeof fids[0]) return og_err(OG_ERR_UNSUPPORTED, "too many streamed columns");
    for (size_t i = 0; i < n; i++) OG_TRY(prop_field(prop_ids[i], &fids[i]));
    return og_tableview_stream(v, fids, n, parts, use, ctx);
}

void og_read_source(og_read *r, og_exec_source *out)
{
    out->node_stream_plan = src_node_stream_plan;
    out->node_stream = src_node_stream;
    out->node_index = src_node_index;
    out->gather = src_gather;
    out->ud = r;
    out->node_rows = src_node_rows;
    out->node_column = src_node_column;
    out->node_zones = src_node_zones;
    out->column_dict = src_column_dict;
    out->edge_column = src_edge_column;
    out->edge_topology = src_edge_topology;
    out->node_find_id = src_node_find_id;
    out->embed_text = src_embed_text;
}

/* ---- compiling and running queries --------------------------------------------------------- */

void og_compiled_free(og_compiled *c)
{
    if (!c) return;
    og_ir_free(c->ir);
    og_query_file_free(c->qf);
    og_source_free(&c->src);
    free(c->text);
    free(c->file);
    free(c);
}

const og_ir_query *og_compiled_ir(const og_compiled *c) { return c->ir; }

og_status og_compile(og_compiled **out, const og_catalog *cat, const char *file, const char *gq, size_t len,
                     const char *name)
{
    *out = NULL;
    og_compiled *c = calloc(1, sizeof *c);
    if (!c) return og_err(OG_ERR_NOMEM, "out of memory");
    c->file = strdup(file ? file : "<query>");
    c->text = malloc(len + 1);
    if (!c->file || !c->text) {
        og_compiled_free(c);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    memcpy(c->text, gq, len);
    c->text[len] = '\0';
    og_diag d;
    memset(&d, 0, sizeof d);
    og_status st = og_source_init(&c->src, c->file, c->text, len);
    if (st == OG_OK) {
        st = og_query_parse(&c->qf, &c->src, &d);
        if (st) st = diag_error(&d, st);
        og_diag_free(&d);
    }
    size_t qi = 0;
    char names[1024];
    if (st == OG_OK) {
        if (name) {
            const og_query *q = og_query_find(c->qf, name);
            if (!q)
                st = og_err(OG_ERR_NOT_FOUND, "%s has no query named '%s'; it has: %s", c->file, name,
                            query_names(c->qf, names, sizeof names));
            else
                qi = (size_t)(q - c->qf->queries);
        } else if (c->qf->nqueries != 1) {
            st = og_err(OG_ERR_INVALID, "%s holds %zu queries; name the one to run: %s", c->file, c->qf->nqueries,
                        query_names(c->qf, names, sizeof names));
        }
    }
    if (st == OG_OK) {
        memset(&d, 0, sizeof d);
        st = og_query_compile(&c->ir, c->qf, qi, cat, &c->src, &d);
        if (st) st = diag_error(&d, st);
        og_diag_free(&d);
    }
    if (st) {
        og_compiled_free(c);
        return st;
    }
    *out = c;
    return OG_OK;
}

/* Compiled read queries are cached like catalogs, in the graph handle's cache, keyed by schema
 * id, file, query name and the whole text ("q:<schema>\x1f<file>\x1f<name>\x1f<text>"): a
 * query repeated by a server (a key lookup) is parsed, checked and lowered once per schema.
 * The IR is immutable once compiled and borrows its catalog, so the entry holds the catalog's
 * entry.  A schema change gives a new schema id, hence a new key: nothing to invalidate. */
typedef struct cached_query {
    og_compiled *c;
    og_cache_entry *cat_hold;
} cached_query;

static void free_cached_query(void *v)
{
    cached_query *q = v;
    og_compiled_free(q->c);
    og_cache_entry_release(q->cat_hold);
    free(q);
}

#define OG_QUERY_CACHE_MAX_TEXT 16384

/* *c is the compiled query; *hold its cache entry (release it) or NULL when *c is the
 * caller's (free it). */
static og_status compile_cached(og_read *r, const char *file, const char *gq, size_t len, const char *name,
                                og_compiled **c, og_cache_entry **hold)
{
    *c = NULL;
    *hold = NULL;
    const char *f = file ? file : "<query>", *n = name ? name : "";
    int cacheable = len <= OG_QUERY_CACHE_MAX_TEXT && !memchr(gq, 0, len) && !strchr(f, '\x1f') && !strchr(n, '\x1f');
    char *key = NULL;
    if (cacheable) {
        const char *sid = og_snapshot_schema_id(r->snap);
        size_t klen = 2 + strlen(sid) + 1 + strlen(f) + 1 + strlen(n) + 1 + len;
        key = malloc(klen + 1);
        if (key) {
            int h = snprintf(key, klen + 1, "q:%s\x1f%s\x1f%s\x1f", sid, f, n);
            memcpy(key + h, gq, len);
            key[(size_t)h + len] = 0;
            og_cache_entry *e = og_cache_get(og_graph_cache(r->e->g), key);
            if (e) {
                free(key);
                *c = ((cached_query *)og_cache_entry_value(e))->c;
                *hold = e;
                return OG_OK;
            }
        }
    }
    og_status st = og_compile(c, r->cat, file, gq, len, name);
    if (st || !key) {
        free(key);
        return st;
    }
    cached_query *q = malloc(sizeof *q);
    if (q) {
        q->c = *c;
        q->cat_hold = og_cache_entry_retain(r->cat_hold);
        og_cache_entry *e;
        /* the put frees q (and the compiled query) on failure, so *c is only kept on success */
        if (og_cache_put(og_graph_cache(r->e->g), key, q, len * 64 + 4096, free_cached_query, &e) == OG_OK) {
            *c = ((cached_query *)og_cache_entry_value(e))->c;
            *hold = e;
        } else {
            *c = NULL;
            st = og_err(OG_ERR_NOMEM, "out of memory");
        }
    }
    free(key);
    return st;
}

og_status og_engine_query(og_engine *e, const char *branch, const char *commit, const char *file, const char *gq,
                          size_t len, const char *name, const json_t *params, og_result *out,
                          char commit_id_out[OG_ULID_LEN + 1])
{
    memset(out, 0, sizeof *out);
    og_read *r;
    OG_TRY(og_read_begin(&r, e, branch, commit));
    og_compiled *c = NULL;
    og_cache_entry *chold = NULL;
    og_vector *pv = NULL;
    og_status st = compile_cached(r, file, gq, len, name, &c, &chold);
    if (st == OG_OK && c->ir->is_mutation)
        st = og_err(OG_ERR_INVALID, "query '%s' is a mutation; run it with mutate", c->ir->name);
    if (st == OG_OK) st = og_exec_bind_params(c->ir, params, &pv);
    if (st == OG_OK) {
        og_exec_source s;
        og_read_source(r, &s);
        st = og_exec_read(c->ir, &s, pv, og_now_ms(), out);
    }
    if (st == OG_OK && commit_id_out) snprintf(commit_id_out, OG_ULID_LEN + 1, "%s", og_snapshot_commit_id(r->snap));
    if (pv) {
        for (size_t i = 0; i < c->ir->nparams; i++) og_vector_free(&pv[i]);
        free(pv);
    }
    if (chold) og_cache_entry_release(chold);
    else og_compiled_free(c);
    og_read_end(r);
    return st;
}

og_status og_engine_query_explain(og_engine *e, const char *branch, const char *commit, const char *file, const char *gq,
                                  size_t len, const char *name, const json_t *params, int run, og_buf *out,
                                  char commit_id_out[OG_ULID_LEN + 1])
{
    og_read *r;
    OG_TRY(og_read_begin(&r, e, branch, commit));
    og_compiled *c = NULL;
    og_vector *pv = NULL;
    og_status st = og_compile(&c, r->cat, file, gq, len, name);
    if (st == OG_OK && c->ir->is_mutation)
        st = og_err(OG_ERR_INVALID, "query '%s' is a mutation; explain reads only", c->ir->name);
    if (st == OG_OK) st = og_exec_bind_params(c->ir, params, &pv);
    if (st == OG_OK) {
        og_exec_source s;
        og_read_source(r, &s);
        st = og_exec_explain(c->ir, &s, pv, og_now_ms(), run, out, NULL);
    }
    if (st == OG_OK && commit_id_out) snprintf(commit_id_out, OG_ULID_LEN + 1, "%s", og_snapshot_commit_id(r->snap));
    if (pv) {
        for (size_t i = 0; i < c->ir->nparams; i++) og_vector_free(&pv[i]);
        free(pv);
    }
    og_compiled_free(c);
    og_read_end(r);
    return st;
}
