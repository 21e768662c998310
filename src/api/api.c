/*
 * api.c — the public C API (include/omnigraph.h) over the engine.  Each function converts
 * between the public shapes (JSON text parameters, receipts, og_rows) and the engine's, and
 * adds nothing of its own: every decision is the engine's.
 */
#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "api/db.h"
#include "api/rows.h"
#include "compiler/settings.h"
#include "util/jsonout.h"
#include "compiler/catalog.h"
#include "engine/optimize.h"
#include "engine/engine.h"
#include "engine/export.h"
#include "engine/history.h"
#include "engine/graph_index.h"
#include "engine/index_build.h"
#include "load/load.h"
#include "engine/mutate.h"
#include "engine/schema_apply.h"
#include "engine/search_ann.h"
#include "graph/graph.h"
#include "util/budget.h"
#include "util/error.h"

void og_free(void *p) { free(p); }

char *og_json_text(const struct json_t *j, size_t flags) { return og_json_dumps(j, flags); }
struct json_t *og_json_read(const char *text, size_t len) { return og_json_load_wide(text, len); }
const char *og_json_digits(const struct json_t *j) { return og_json_bignum_digits(j); }

og_status og_settings_check(const char *name, const char *value)
{
    char msg[512];
    if (!name || !value) return og_err(OG_ERR_INVALID, "a setting needs a name and a value");
    size_t vn = strlen(value);
    size_t sign = vn && value[0] == '-';
    int is_int = vn > sign && strspn(value + sign, "0123456789") == vn - sign;
    if (!og_setting_check(name, strlen(name), value, vn, 0, is_int, msg, sizeof msg))
        return og_err(OG_ERR_INVALID, "%s", msg);
    return OG_OK;
}

static og_engine_opts engine_opts(const og_open_opts *o, struct og_api_embed_state *emb)
{
    og_engine_opts eo = {o ? o->actor : NULL, og_api_cache_bytes(o ? o->cache_bytes : 0), og_api_embed_text, emb,
                         o ? o->actor_via : NULL};
    return eo;
}

static og_status wrap(og_db **out, og_engine *e, struct og_api_embed_state *emb, const char *uri)
{
    og_db *db = calloc(1, sizeof *db);
    if (!db) {
        og_engine_close(e);
        og_api_embed_state_free(emb);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    db->e = e;
    db->emb = emb;
    og_api_depth_memo_init(&db->depth);
    snprintf(db->uri, sizeof db->uri, "%s", uri);
    *out = db;
    return OG_OK;
}

int og_storage_version(void) { return OG_STORAGE_VERSION; }

og_status og_db_init(og_db **out, const char *uri, const char *schema_name, const char *schema, size_t len,
                     const og_open_opts *opts)
{
    *out = NULL;
    if (!uri || !schema) return og_err(OG_ERR_INVALID, "og_db_init: uri and schema are required");
    struct og_api_embed_state *emb = og_api_embed_state_new(uri);
    if (!emb) return og_err(OG_ERR_NOMEM, "out of memory");
    og_engine_opts eo = engine_opts(opts, emb);
    og_engine *e;
    og_status st = og_engine_init(&e, uri, schema_name, schema, len, &eo);
    if (st != OG_OK) {
        og_api_embed_state_free(emb);
        return st;
    }
    return wrap(out, e, emb, uri);
}

og_status og_db_open(og_db **out, const char *uri, const og_open_opts *opts)
{
    *out = NULL;
    if (!uri) return og_err(OG_ERR_INVALID, "og_db_open: uri is required");
    /* Opening never creates anything: a local root that does not exist is NOT_FOUND before the
     * store (which makes its root directory on open, for init) is touched. */
    const char *local = !strncmp(uri, "file://", 7) ? uri + 7 : strstr(uri, "://") ? NULL : uri;
    struct stat sb;
    if (local && *local && stat(local, &sb) != 0 && errno == ENOENT)
        return og_err(OG_ERR_NOT_FOUND, "no OmniGraph graph at %s: the directory does not exist (create one with "
                      "`omnigraph init`)", uri);
    struct og_api_embed_state *emb = og_api_embed_state_new(uri);
    if (!emb) return og_err(OG_ERR_NOMEM, "out of memory");
    og_engine_opts eo = engine_opts(opts, emb);
    og_engine *e;
    og_status st = og_engine_open(&e, uri, &eo);
    if (st != OG_OK) {
        og_api_embed_state_free(emb);
        return st;
    }
    return wrap(out, e, emb, uri);
}

void og_db_close(og_db *db)
{
    if (!db) return;
    og_engine_close(db->e);
    og_api_embed_state_free(db->emb);
    og_api_depth_memo_free(&db->depth);
    free(db);
}

void og_db_keep_heads(og_db *db, int on)
{
    if (db) og_graph_keep_heads(og_engine_graph(db->e), on);
}

og_status og_set_thread_actor(const char *actor) { return og_engine_set_thread_actor(actor); }
og_status og_set_thread_actor_via(const char *actor, const char *via)
{
    return og_engine_set_thread_actor_via(actor, via);
}
og_status og_set_thread_commit_message(const char *message) { return og_engine_set_thread_message(message); }

/* Parses optional JSON parameters text. */
static og_status parse_params(const char *text, json_t **out)
{
    *out = NULL;
    if (!text || !*text) return OG_OK;
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    /* a U64 above 2^63-1, which jansson refuses, as a bignum (og_jsonval_append reads it) */
    if (!j && json_error_code(&jerr) == json_error_numeric_overflow) j = og_json_load_wide(text, strlen(text));
    if (!j) return og_err(OG_ERR_INVALID, "parameters are not valid JSON (column %d): %s", jerr.column, jerr.text);
    if (!json_is_object(j)) {
        json_decref(j);
        return og_err(OG_ERR_INVALID, "parameters must be a JSON object");
    }
    *out = j;
    return OG_OK;
}

og_status og_db_query(og_rows **out, og_db *db, const char *source, size_t len, const char *name,
                      const char *params_json, const og_read_opts *at)
{
    return og_db_query_ex(out, db, source, len, name, params_json, at, NULL);
}

og_status og_db_query_ex(og_rows **out, og_db *db, const char *source, size_t len, const char *name,
                         const char *params_json, const og_read_opts *at, const og_query_opts *qo)
{
    *out = NULL;
    json_t *params;
    OG_TRY(parse_params(params_json, &params));
    og_rows *r = calloc(1, sizeof *r);
    if (!r) {
        json_decref(params);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    char cbuf[27];
    const char *commit = NULL;
    og_status st = og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit);
    if (st) {
        json_decref(params);
        free(r);
        return st;
    }
    og_search_set_exact(qo && qo->exact);
    og_search_set_ef(qo ? qo->ef : 0);
    og_query_budget qb; /* time and memory budgets (api_budget.c, util/budget.h) */
    og_api_budget_begin(db, &qb);
    r->deadline_ms = qb.deadline_ms; /* rendering may be held to the same budget (og_rows_render_in_budget) */
    r->time_ms = qb.time_ms;
    st = og_engine_query(db->e, at ? at->branch : NULL, commit, "<query>", source, len,
                                   name, params, &r->res, r->commit);
    og_budget_end(&qb);
    og_search_set_exact(0);
    og_search_set_ef(0);
    json_decref(params);
    if (st == OG_OK) st = og_rows_finish(r, name);
    if (st) {
        og_rows_free(r);
        return st;
    }
    *out = r;
    return OG_OK;
}

og_status og_db_query_explain(char **out, og_db *db, const char *source, size_t len, const char *name,
                              const char *params_json, const og_read_opts *at, int analyze)
{
    *out = NULL;
    json_t *params;
    OG_TRY(parse_params(params_json, &params));
    char cbuf[27];
    const char *commit = NULL;
    og_status st = og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit);
    og_buf b = OG_BUF_INIT;
    char used[OG_ULID_LEN + 1] = "";
    if (st == OG_OK)
        st = og_engine_query_explain(db->e, at ? at->branch : NULL, commit, "<query>", source, len, name, params, analyze,
                                     &b, used);
    json_decref(params);
    if (st == OG_OK) st = og_buf_append_byte(&b, '\0');
    if (st) {
        og_buf_free(&b);
        return st;
    }
    *out = (char *)b.data;
    return OG_OK;
}

static void receipt_fill(og_receipt *out, const og_write_result *w, const char *branch)
{
    out->published = w->published;
    snprintf(out->commit, sizeof out->commit, "%s", w->published ? w->commit : "");
    snprintf(out->branch, sizeof out->branch, "%s", branch ? branch : "main");
    out->attempts = w->attempts;
}

/* After a published write: compacts the branch when a table has too many fragments
 * (engine/optimize.h).  Never fails the write, whose commit is already visible.  1 when it
 * published a compaction. */
static int auto_optimize(og_db *db, const char *branch, const char *commit)
{
    og_optimize_report rep;
    if (og_engine_auto_optimize(db->e, branch ? branch : "main", commit, &rep) != OG_OK) {
        og_error_clear();
        return 0;
    }
    return rep.published;
}

/* The writer's one hook after a published write (the commit is visible already): compaction,
 * then the text and vector indexes its new data files need (engine/index_build.h,
 * docs/indexes.md "Automatic indexing").  Derived state: a failure is reported in the
 * receipt, never the write's. */
static void after_write(og_db *db, const char *branch, const char *commit, uint64_t rows, int no_index, og_receipt *out)
{
    int compacted = auto_optimize(db, branch, commit);
    if (no_index) return;
    out->index_status = og_engine_index_auto(db->e, branch ? branch : "main", rows, compacted, &out->index_files_built);
    if (out->index_status != OG_OK) og_error_clear();
}

og_status og_db_optimize(og_optimize_result *out, og_db *db, const char *branch, const char *expected_head)
{
    memset(out, 0, sizeof *out);
    og_optimize_opts o = {branch, 0, expected_head, 0, NULL, NULL};
    og_optimize_report rep;
    OG_TRY(og_engine_optimize(db->e, &o, &rep));
    out->published = rep.published;
    snprintf(out->commit, sizeof out->commit, "%s", rep.published ? rep.commit : "");
    out->attempts = rep.attempts;
    out->tables = rep.tables;
    out->fragments_before = rep.fragments_before;
    out->fragments_after = rep.fragments_after;
    out->rows_rewritten = rep.rows_rewritten;
    out->deleted_rows_dropped = rep.deleted_rows_dropped;
    /* then the persisted indexes the (new) head lacks (docs/indexes.md): derived state, so a
     * failure is reported but never fails the compaction, which is published already */
    og_index_run_opts io = {branch, NULL, NULL, 1};
    json_t *ir = NULL;
    out->index_status = og_engine_index_run(db->e, &io, &ir);
    if (out->index_status == OG_OK) {
        out->index_files_built = (uint64_t)json_integer_value(json_object_get(ir, "built"));
        out->index_files = (uint64_t)json_integer_value(json_object_get(ir, "files"));
        out->index_covered = (uint64_t)json_integer_value(json_object_get(ir, "covered"));
    } else {
        snprintf(out->index_error, sizeof out->index_error, "%s", og_error_message());
        og_error_clear();
    }
    json_decref(ir);
    /* and the key maps and topologies of the head, so its first query opens them instead of
     * building them (engine/graph_index.h); derived state too: reported, never fatal */
    og_graph_index_report gr;
    og_status gst = og_engine_graph_index_build(db->e, branch, &gr);
    if (gst != OG_OK) {
        if (out->index_status == OG_OK) {
            out->index_status = gst;
            snprintf(out->index_error, sizeof out->index_error, "graph indexes: %s", og_error_message());
        }
        og_error_clear();
    }
    return OG_OK;
}

static og_status index_run(char **out, og_db *db, const char *branch, const char *kind, const char *property,
                           int build)
{
    *out = NULL;
    og_index_run_opts o = {branch, kind, property, build};
    json_t *rep;
    OG_TRY(og_engine_index_run(db->e, &o, &rep));
    *out = json_dumps(rep, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(rep);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

og_status og_db_index_status(char **out, og_db *db, const char *branch, const char *kind, const char *property)
{
    return index_run(out, db, branch, kind, property, 0);
}

og_status og_db_index_build(char **out, og_db *db, const char *branch, const char *kind, const char *property)
{
    return index_run(out, db, branch, kind, property, 1);
}

og_status og_db_load(og_receipt *out, og_db *db, const char *path, const og_load_opts *opts)
{
    memset(out, 0, sizeof *out);
    if (!path || !opts) return og_err(OG_ERR_INVALID, "og_db_load: path and options are required");
    og_write_result w;
    memset(&w, 0, sizeof w);
    og_load_stats s = {0};
    og_load_index_job *ij; /* its key maps and topologies overlap the text indexes below */
    og_query_budget qb;
    og_api_write_budget_begin(db, &qb, "load");
    og_status st = og_engine_load_deferred(db->e, path, opts, &w, &s, &ij);
    og_budget_end(&qb);
    OG_TRY(st);
    receipt_fill(out, &w, opts->branch);
    if (w.published) after_write(db, opts->branch, w.commit, s.inserted + s.updated, opts->no_index, out);
    og_engine_load_indexes_join(ij);
    out->records = s.records;
    out->inserted = s.inserted;
    out->updated = s.updated;
    out->embed_touched = s.embed_touched;
    return OG_OK;
}

og_status og_db_load_csv(og_receipt *out, og_db *db, const og_load_csv_file *files, size_t nfiles, char delimiter,
                         const og_load_opts *opts)
{
    memset(out, 0, sizeof *out);
    if (!files || !opts) return og_err(OG_ERR_INVALID, "og_db_load_csv: files and options are required");
    og_write_result w;
    memset(&w, 0, sizeof w);
    og_load_stats s = {0};
    og_load_index_job *ij; /* as og_db_load */
    og_query_budget qb;
    og_api_write_budget_begin(db, &qb, "load");
    og_status st = og_engine_load_csv_deferred(db->e, files, nfiles, delimiter, opts, &w, &s, &ij);
    og_budget_end(&qb);
    OG_TRY(st);
    receipt_fill(out, &w, opts->branch);
    if (w.published) after_write(db, opts->branch, w.commit, s.inserted + s.updated, opts->no_index, out);
    og_engine_load_indexes_join(ij);
    out->records = s.records;
    out->inserted = s.inserted;
    out->updated = s.updated;
    out->embed_touched = s.embed_touched;
    return OG_OK;
}

og_status og_db_mutate(og_receipt *out, og_db *db, const char *source, size_t len, const char *name,
                       const char *params_json, const char *branch, const char *expected_head)
{
    og_db_mutate_opts o = {branch, NULL, expected_head};
    return og_db_mutate_ex(out, db, source, len, name, params_json, &o);
}

og_status og_db_mutate_ex(og_receipt *out, og_db *db, const char *source, size_t len, const char *name,
                          const char *params_json, const og_db_mutate_opts *opts)
{
    memset(out, 0, sizeof *out);
    const char *branch = opts ? opts->branch : NULL, *expected_head = opts ? opts->expected_head : NULL;
    json_t *params;
    OG_TRY(parse_params(params_json, &params));
    if (opts && opts->from) {
        og_status fst = og_history_fork_missing(og_engine_graph(db->e), branch ? branch : "main", opts->from,
                                                og_engine_actor(db->e));
        if (fst) {
            json_decref(params);
            return fst;
        }
    }
    og_mutate_opts mo = {branch, expected_head};
    og_write_result w;
    memset(&w, 0, sizeof w);
    og_mutate_stats s = {0};
    og_query_budget qb;
    og_api_write_budget_begin(db, &qb, "mutation");
    og_status st = og_engine_mutate(db->e, "<mutation>", source, len, name, params, &mo, &w, &s);
    og_budget_end(&qb);
    json_decref(params);
    if (st) return st;
    receipt_fill(out, &w, branch);
    if (w.published) after_write(db, branch, w.commit, s.affected_nodes, 0, out);
    out->affected_nodes = s.affected_nodes;
    out->affected_edges = s.affected_edges;
    out->inserted = s.inserted;
    out->updated = s.updated;
    out->deleted = s.deleted;
    return OG_OK;
}

og_status og_db_export(og_db *db, FILE *out, const og_read_opts *at, const char *const *types, size_t ntypes)
{
    char cbuf[27];
    const char *commit;
    OG_TRY(og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit));
    return og_engine_export(db->e, at ? at->branch : NULL, commit, types, ntypes, out);
}

og_status og_db_export_csv(og_db *db, FILE *out, const og_read_opts *at, const char *type, char delimiter)
{
    if (!type) return og_err(OG_ERR_INVALID, "og_db_export_csv: a type is required");
    char cbuf[27];
    const char *commit;
    OG_TRY(og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit));
    return og_engine_export_csv(db->e, at ? at->branch : NULL, commit, type, delimiter, out);
}

static og_status dump_json(json_t *j, char **out)
{
    *out = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

json_t *og_api_tables_json(og_read *r)
{
    const og_snapshot *s = og_read_snapshot(r);
    const og_catalog *cat = og_read_catalog(r);
    json_t *tables = json_array();
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? cat->nedges : cat->nnodes;
        for (size_t i = 0; i < n; i++) {
            const og_cat_type *t = pass ? &cat->edges[i] : &cat->nodes[i];
            char dir[64];
            og_cat_type_table_dir(t, dir, sizeof dir);
            const og_table_ref *ref = og_snapshot_table(s, dir);
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string(t->name));
            json_object_set_new(e, "kind", json_string(pass ? "edge" : "node"));
            json_object_set_new(e, "table", json_string(dir));
            json_object_set_new(e, "version", json_integer(ref ? (json_int_t)ref->version : 0));
            json_object_set_new(e, "rows", json_integer(ref ? (json_int_t)ref->rows : 0));
            json_array_append_new(tables, e);
        }
    }
    return tables;
}

og_status og_db_snapshot(char **out, og_db *db, const og_read_opts *at)
{
    *out = NULL;
    og_read *r;
    char cbuf[27];
    const char *commit;
    OG_TRY(og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit));
    OG_TRY(og_read_begin(&r, db->e, at ? at->branch : NULL, commit));
    const og_snapshot *s = og_read_snapshot(r);
    const og_ref_entry *head = og_snapshot_head(s);
    json_t *o = json_object();
    json_object_set_new(o, "commit", json_string(og_snapshot_commit_id(s)));
    json_object_set_new(o, "branch", head ? json_string(head->branch) : json_null());
    json_object_set_new(o, "schema", json_string(og_snapshot_schema_id(s)));
    json_object_set_new(o, "tables", og_api_tables_json(r));
    og_read_end(r);
    return dump_json(o, out);
}

og_status og_db_schema_source(char **out, og_db *db, const og_read_opts *at)
{
    *out = NULL;
    og_read *r;
    char cbuf[27];
    const char *commit;
    OG_TRY(og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit));
    OG_TRY(og_read_begin(&r, db->e, at ? at->branch : NULL, commit));
    const og_catalog *cat = og_read_catalog(r);
    og_status st = OG_OK;
    *out = strdup(cat->source ? cat->source : "");
    if (!*out) st = og_err(OG_ERR_NOMEM, "out of memory");
    og_read_end(r);
    return st;
}

static og_status render_plan(char **out, const og_migration_plan *p, int json)
{
    og_buf b = OG_BUF_INIT;
    og_status st = json ? og_migration_plan_json(&b, p) : og_migration_plan_render(&b, p);
    if (st) {
        og_buf_free(&b);
        return st;
    }
    og_buf_cstr(&b);
    *out = (char *)og_buf_take(&b).data;
    if (!*out) *out = strdup("");
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

og_status og_db_schema_plan(char **out, og_db *db, const char *branch, const char *schema_name, const char *schema,
                            size_t len, int json)
{
    *out = NULL;
    og_migration_plan p;
    OG_TRY(og_engine_schema_plan(db->e, branch, schema_name, schema, len, &p));
    og_status st = render_plan(out, &p, json);
    og_migration_plan_free(&p);
    return st;
}

og_status og_db_schema_apply(og_receipt *out, char **plan_out, og_db *db, const char *branch, const char *schema_name,
                             const char *schema, size_t len, int allow_data_loss, int json)
{
    og_db_schema_apply_opts o = {branch, NULL, allow_data_loss, json};
    return og_db_schema_apply_ex(out, plan_out, db, schema_name, schema, len, &o);
}

og_status og_db_schema_apply_ex(og_receipt *out, char **plan_out, og_db *db, const char *schema_name, const char *schema,
                                size_t len, const og_db_schema_apply_opts *opts)
{
    memset(out, 0, sizeof *out);
    if (plan_out) *plan_out = NULL;
    if (!opts) return og_err(OG_ERR_INVALID, "og_db_schema_apply_ex: options are required");
    og_write_result w;
    memset(&w, 0, sizeof w);
    og_migration_plan p;
    memset(&p, 0, sizeof p);
    og_schema_reclaim rc;
    OG_TRY(og_engine_schema_apply_expect(db->e, opts->branch, opts->expected_head, schema_name, schema, len,
                                         opts->allow_data_loss, &w, &p, &rc));
    receipt_fill(out, &w, opts->branch);
    out->reclaimed_tables = rc.tables;
    out->reclaimed_versions = rc.versions;
    out->reclaimed_files = rc.files;
    out->reclaimed_bytes = rc.bytes;
    out->reclaim_status = rc.status;
    snprintf(out->reclaim_error, sizeof out->reclaim_error, "%s", rc.error);
    og_status st = plan_out ? render_plan(plan_out, &p, opts->json) : OG_OK;
    og_migration_plan_free(&p);
    return st;
}
