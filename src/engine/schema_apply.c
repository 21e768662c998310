/*
 * schema_apply.c — migration planning against a graph and applying it.  See schema_apply.h.
 */
#include "engine/schema_apply.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/schema.h"
#include "engine/layout.h"
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

typedef struct apply_ctx {
    og_engine *e;
    const char *file, *text;
    size_t len;
    int allow_data_loss;
    og_migration_plan plan;
    int have_plan;
} apply_ctx;

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

/* Brings the table of desired type t to its layout: a new empty table, or a new version with
 * the new table schema when fields were added, renamed or dropped. */
static og_status reconcile_table(og_engine *e, const og_snapshot *base, const og_cat_type *t, og_commit_draft *d)
{
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
    if (st == OG_OK && changed) {
        st = og_table_txn_begin(&x, tab, ref ? ref->version : 0, ref ? NULL : &want);
        if (st == OG_OK && ref) st = og_table_txn_set_schema(x, &want);
        if (st == OG_OK) st = og_table_txn_commit(x, &version);
        if (st == OG_OK) st = og_draft_set_table(d, dir, version, ref ? ref->rows : 0);
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
        for (size_t i = 0; st == OG_OK && i < n; i++) st = reconcile_table(c->e, base, pass ? &want->edges[i] : &want->nodes[i], d);
    }
    /* dropped types leave the commit (their tables stay for the commits that name them) */
    for (int pass = 0; st == OG_OK && pass < 2; pass++) {
        size_t n = pass ? accepted->nedges : accepted->nnodes;
        for (size_t i = 0; st == OG_OK && i < n; i++) {
            const og_cat_type *t = pass ? &accepted->edges[i] : &accepted->nodes[i];
            if (og_catalog_type_by_id(want, t->id)) continue;
            char dir[64];
            og_cat_type_table_dir(t, dir, sizeof dir);
            st = og_draft_remove_table(d, dir);
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

og_status og_engine_schema_apply(og_engine *e, const char *branch, const char *file, const char *text, size_t len,
                                 int allow_data_loss, og_write_result *out, og_migration_plan *plan_out)
{
    return og_engine_schema_apply_expect(e, branch, NULL, file, text, len, allow_data_loss, out, plan_out);
}

og_status og_engine_schema_apply_expect(og_engine *e, const char *branch, const char *expected_head, const char *file,
                                        const char *text, size_t len, int allow_data_loss, og_write_result *out,
                                        og_migration_plan *plan_out)
{
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
    wo.expected_head = expected_head;
    og_status st = og_graph_write(og_engine_graph(e), &wo, apply_attempt, &c, out);
    if (plan_out && c.have_plan && st == OG_OK) {
        *plan_out = c.plan;
    } else if (c.have_plan) {
        og_migration_plan_free(&c.plan);
    }
    return st;
}
