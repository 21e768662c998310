/*
 * schema_apply.c — migration planning against a graph and applying it.  See schema_apply.h.
 *
 * A hard drop has two halves.  Inside the write-protocol attempt (so a lost publish redoes
 * it from a fresh capture) each table that loses columns gets its new version with those
 * columns rewritten out of the data files, and the attempt lists the tables to reclaim.  After
 * the publish — the list of the attempt that published — the history of those tables is
 * reclaimed (og_table_gc / og_table_destroy).  Reclaiming is not part of the commit: a crash or
 * failure there leaves a published apply plus data that a repeat would still find (see
 * table_gc.c), reported in og_schema_reclaim, never as a failed apply.
 */
#include "engine/schema_apply.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/schema.h"
#include "engine/layout.h"
#include "engine/tableview.h"
#include "table/table.h"
#include "util/error.h"

static og_status plan_error(const og_diags *d, og_status st)
{
    for (size_t i = 0; i < d->len; i++) {
        if (d->v[i].warning) continue;
        og_buf b = OG_BUF_INIT;
        if (og_diag_format(&b, &d->v[i]) == OG_OK) og_err(d->v[i].code ? d->v[i].code : st, "%s", og_buf_cstr(&b));
        og_buf_free(&b);
        return d->v[i].code ? d->v[i].code : st;
    }
    return st;
}

static og_status build_plan(const og_catalog *accepted, const char *file, const char *text, size_t len,
                            og_migration_plan *out)
{
    og_diags d = OG_DIAGS_INIT;
    memset(out, 0, sizeof *out);
    og_status st = og_migration_plan_build(out, accepted, file, text, len, &d);
    if (st) st = plan_error(&d, st);
    og_diags_free(&d);
    return st;
}

og_status og_engine_schema_plan(og_engine *e, const char *branch, const char *file, const char *text, size_t len,
                                og_migration_plan *out)
{
    og_read *r;
    OG_TRY(og_read_begin(&r, e, branch, NULL));
    og_status st = build_plan(og_read_catalog(r), file, text, len, out);
    og_read_end(r);
    return st;
}

/* A table a hard drop reclaims after the publish: versions below keep_from go, or, with
 * keep_from 0 (a dropped type), the whole table directory. */
typedef struct reclaim_item {
    char dir[64];
    uint64_t keep_from;
} reclaim_item;

typedef struct apply_ctx {
    og_engine *e;
    const char *file, *text;
    size_t len;
    int allow_data_loss;
    og_migration_plan plan;
    int have_plan;
    reclaim_item *reclaim; /* this attempt's (reset at each attempt) */
    size_t nreclaim, reclaim_cap;
} apply_ctx;

static og_status reclaim_push(apply_ctx *c, const char *dir, uint64_t keep_from)
{
    if (c->nreclaim == c->reclaim_cap) {
        size_t cap = c->reclaim_cap ? c->reclaim_cap * 2 : 8;
        reclaim_item *p = realloc(c->reclaim, cap * sizeof *p);
        if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
        c->reclaim = p;
        c->reclaim_cap = cap;
    }
    reclaim_item *it = &c->reclaim[c->nreclaim++];
    snprintf(it->dir, sizeof it->dir, "%s", dir);
    it->keep_from = keep_from;
    return OG_OK;
}

static og_status refuse_unsupported(const og_migration_plan *p)
{
    og_buf b = OG_BUF_INIT;
    og_buf_append_str(&b, "the migration has unsupported steps; nothing was applied:");
    for (size_t i = 0; i < p->nsteps; i++) {
        if (p->steps[i].kind != OG_STEP_UNSUPPORTED) continue;
        og_buf_append_str(&b, "\n  ");
        og_migration_step_render(&b, &p->steps[i]);
    }
    og_status st = og_err(OG_ERR_UNSUPPORTED, "%s", og_buf_cstr(&b));
    og_buf_free(&b);
    return st;
}

static og_status check_single_branch(og_engine *e)
{
    og_branch_list l;
    OG_TRY(og_branch_list_all(og_engine_graph(e), &l));
    og_status st = OG_OK;
    if (l.count > 1) {
        og_buf b = OG_BUF_INIT;
        for (size_t i = 0; i < l.count; i++)
            if (strcmp(l.items[i].branch, "main")) og_buf_printf(&b, "%s%s", b.len ? ", " : "", l.items[i].branch);
        st = og_err(OG_ERR_UNSUPPORTED, "schema apply needs a graph whose only branch is main; merge or delete: %s",
                    og_buf_cstr(&b));
        og_buf_free(&b);
    }
    og_branch_list_free(&l);
    return st;
}

/* 1 when the two schemas have the same fields (ids, names, types, nullability) in order. */
static int same_fields(const og_lance_schema *a, const og_lance_schema *b)
{
    if (a->count != b->count) return 0;
    for (size_t i = 0; i < a->count; i++) {
        const og_lance_field *x = &a->fields[i], *y = &b->fields[i];
        if (x->id != y->id || x->parent_id != y->parent_id || x->nullable != y->nullable || strcmp(x->name, y->name) ||
            strcmp(x->logical_type, y->logical_type))
            return 0;
    }
    return 1;
}

/* 1 when `want` lacks a top-level field of `have` (a property was dropped). */
static int drops_fields(const og_lance_schema *have, const og_lance_schema *want)
{
    for (size_t i = 0; i < have->count; i++)
        if (have->fields[i].parent_id == -1 && og_lance_schema_find_id(want, have->fields[i].id) < 0) return 1;
    return 0;
}

/* 1 when a data file of f holds a field `want` lacks (a dropped column, now or earlier). */
static int holds_stale_field(const og_fragment *f, const og_lance_schema *want)
{
    for (size_t i = 0; i < f->nfiles; i++)
        for (size_t k = 0; k < f->files[i].nfields; k++)
            if (og_lance_schema_find_id(want, f->files[i].fields[k]) < 0) return 1;
    return 0;
}

/* Rewrites, in txn x (whose schema is already the new one), every fragment of base manifest m
 * whose data files hold a column the new schema lacks: a compaction of that one fragment
 * writes its live rows with the new schema's fields only.  One fragment at a time, so memory
 * follows the largest fragment, not the table. */
static og_status rewrite_without_dropped(og_table_txn *x, const og_manifest *m, const og_lance_schema *want)
{
    for (size_t i = 0; i < m->nfragments; i++) {
        if (!holds_stale_field(&m->fragments[i], want)) continue;
        OG_TRY(og_table_txn_compact(x, &m->fragments[i].id, 1, NULL));
    }
    return OG_OK;
}

/* Brings the table of desired type t to its layout: a new empty table, or a new version with
 * the new table schema when fields were added, renamed or dropped.  Under a hard drop a table
 * that loses fields has them rewritten out of its data files and is listed for reclaiming. */
static og_status reconcile_table(apply_ctx *c, const og_snapshot *base, const og_cat_type *t, og_commit_draft *d)
{
    og_engine *e = c->e;
    char dir[64];
    og_cat_type_table_dir(t, dir, sizeof dir);
    og_lance_schema want = OG_LANCE_SCHEMA_INIT;
    OG_TRY(og_layout_schema(t, &want));
    og_table *tab = NULL;
    og_table_txn *x = NULL;
    og_manifest m;
    memset(&m, 0, sizeof m);
    int have_manifest = 0;
    const og_table_ref *ref = og_snapshot_table(base, dir);
    og_status st = og_table_open(&tab, og_engine_store(e), dir);
    if (st == OG_OK && ref) {
        st = og_table_load(tab, ref->version, &m);
        have_manifest = st == OG_OK;
    }
    uint64_t version = 0;
    int changed = !ref;
    if (st == OG_OK && ref && !same_fields(&m.schema, &want)) changed = 1;
    int hard = st == OG_OK && changed && have_manifest && c->allow_data_loss && drops_fields(&m.schema, &want);
    if (st == OG_OK && changed) {
        st = og_table_txn_begin(&x, tab, ref ? ref->version : 0, ref ? NULL : &want);
        if (st == OG_OK && ref) st = og_table_txn_set_schema(x, &want);
        if (st == OG_OK && hard) st = rewrite_without_dropped(x, &m, &want);
        if (st == OG_OK) st = og_table_txn_commit(x, &version);
        if (st == OG_OK) st = og_draft_set_table(d, dir, version, ref ? ref->rows : 0);
        if (st == OG_OK && hard) st = reclaim_push(c, dir, version);
    }
    og_table_txn_free(x);
    if (have_manifest) og_manifest_free(&m);
    og_table_close(tab);
    og_lance_schema_free(&want);
    return st ? og_err_wrap(st, "migrating the table of %s", t->name) : OG_OK;
}

static og_status apply_attempt(void *vctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)attempt;
    apply_ctx *c = vctx;
    if (c->have_plan) og_migration_plan_free(&c->plan);
    c->have_plan = 0;
    c->nreclaim = 0; /* only the attempt that publishes decides what is reclaimed */
    og_read *r;
    OG_TRY(og_read_begin_at(&r, c->e, base));
    const og_catalog *accepted = og_read_catalog(r);
    og_status st = build_plan(accepted, c->file, c->text, c->len, &c->plan);
    c->have_plan = st == OG_OK;
    if (st == OG_OK && !c->plan.supported) st = refuse_unsupported(&c->plan);
    if (st == OG_OK && c->plan.nsteps == 0) {
        og_draft_set_noop(d);
        og_read_end(r);
        return OG_OK;
    }
    if (st == OG_OK) st = check_single_branch(c->e);
    for (size_t i = 0; st == OG_OK && i < c->plan.nsteps; i++)
        if (c->plan.steps[i].kind == OG_STEP_DROP_TYPE || c->plan.steps[i].kind == OG_STEP_DROP_PROPERTY)
            c->plan.steps[i].hard = c->allow_data_loss;
    const og_catalog *want = c->plan.desired;
    for (int pass = 0; st == OG_OK && pass < 2; pass++) {
        size_t n = pass ? want->nedges : want->nnodes;
        for (size_t i = 0; st == OG_OK && i < n; i++) st = reconcile_table(c, base, pass ? &want->edges[i] : &want->nodes[i], d);
    }
    /* dropped types leave the commit; a soft drop keeps their tables for the commits that name
     * them, a hard drop removes them after the publish (edges of a dropped node type are
     * dropped with it: the planner refuses a desired schema that still names it) */
    for (int pass = 0; st == OG_OK && pass < 2; pass++) {
        size_t n = pass ? accepted->nedges : accepted->nnodes;
        for (size_t i = 0; st == OG_OK && i < n; i++) {
            const og_cat_type *t = pass ? &accepted->edges[i] : &accepted->nodes[i];
            if (og_catalog_type_by_id(want, t->id)) continue;
            char dir[64];
            og_cat_type_table_dir(t, dir, sizeof dir);
            st = og_draft_remove_table(d, dir);
            if (st == OG_OK && c->allow_data_loss) st = reclaim_push(c, dir, 0);
        }
    }
    og_buf json = OG_BUF_INIT;
    char schema_id[OG_SCHEMA_ID_LEN + 1];
    if (st == OG_OK) st = og_catalog_to_json(&json, want);
    if (st == OG_OK) st = og_graph_schema_put(g, json.data, json.len, schema_id);
    if (st == OG_OK) st = og_draft_set_schema(d, schema_id);
    if (st == OG_OK) st = og_draft_set_operation(d, OG_OP_SCHEMA_APPLY, c->allow_data_loss ? "allow_data_loss" : NULL);
    if (st == OG_OK) st = og_draft_set_stat(d, "steps", (int64_t)c->plan.nsteps);
    og_buf_free(&json);
    og_read_end(r);
    return st;
}

/* Keeps the first reclaim failure: status and a message saying the apply stands. */
static void reclaim_fail(og_schema_reclaim *r, og_status st, const char *commit, const char *what)
{
    if (r->status != OG_OK) return;
    r->status = st;
    snprintf(r->error, sizeof r->error, "commit %s is published, but %s: %s", commit, what, og_error_message());
}

/* After the publish of `commit`: reclaims the tables the publishing attempt listed. */
static void reclaim_tables(og_engine *e, const apply_ctx *c, const char *commit, og_schema_reclaim *r)
{
    /* A branch created since the attempt's check may name the old versions: keep everything. */
    og_status st = check_single_branch(e);
    if (st != OG_OK) {
        reclaim_fail(r, st, commit, "nothing was reclaimed");
        og_error_clear();
        return;
    }
    og_cache *cache = og_graph_cache(og_engine_graph(e));
    for (size_t i = 0; i < c->nreclaim; i++) {
        const reclaim_item *it = &c->reclaim[i];
        og_table *tab = NULL;
        og_table_gc_stats s;
        memset(&s, 0, sizeof s);
        st = og_table_open(&tab, og_engine_store(e), it->dir);
        if (st == OG_OK) {
            og_table_set_cache(tab, cache); /* og_table_gc evicts the removed manifests */
            st = it->keep_from ? og_table_gc(tab, it->keep_from, &s) : og_table_destroy(tab, &s);
        }
        og_table_close(tab);
        for (uint64_t v = 1; v <= s.newest_removed; v++) og_tableview_evict(cache, it->dir, v);
        r->versions += s.versions_removed;
        r->files += s.files_removed;
        r->bytes += s.bytes_removed;
        if (st == OG_OK) {
            r->tables++;
            continue;
        }
        char what[128];
        snprintf(what, sizeof what, "reclaiming table %s failed", it->dir);
        reclaim_fail(r, st, commit, what);
    }
    og_error_clear();
}

og_status og_engine_schema_apply(og_engine *e, const char *branch, const char *file, const char *text, size_t len,
                                 int allow_data_loss, og_write_result *out, og_migration_plan *plan_out)
{
    return og_engine_schema_apply_expect(e, branch, NULL, file, text, len, allow_data_loss, out, plan_out, NULL);
}

og_status og_engine_schema_apply_expect(og_engine *e, const char *branch, const char *expected_head, const char *file,
                                        const char *text, size_t len, int allow_data_loss, og_write_result *out,
                                        og_migration_plan *plan_out, og_schema_reclaim *reclaim_out)
{
    og_schema_reclaim reclaim_local;
    og_schema_reclaim *reclaim = reclaim_out ? reclaim_out : &reclaim_local;
    memset(reclaim, 0, sizeof *reclaim);
    og_write_result w_local;
    og_write_result *w = out ? out : &w_local;
    memset(w, 0, sizeof *w);
    apply_ctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.file = file;
    c.text = text;
    c.len = len;
    c.allow_data_loss = allow_data_loss;
    og_write_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.branch = branch ? branch : "main";
    wo.actor = og_engine_actor(e);
    wo.actor_via = og_engine_actor_via(e);
    wo.message = og_engine_message();
    wo.expected_head = expected_head;
    og_status st = og_graph_write(og_engine_graph(e), &wo, apply_attempt, &c, w);
    if (st == OG_OK && w->published && c.nreclaim) reclaim_tables(e, &c, w->commit, reclaim);
    free(c.reclaim);
    if (plan_out && c.have_plan && st == OG_OK) {
        *plan_out = c.plan;
    } else if (c.have_plan) {
        og_migration_plan_free(&c.plan);
    }
    return st;
}
