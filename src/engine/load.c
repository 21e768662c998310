/*
 * load.c — NDJSON load through the write protocol.  See load.h.
 *
 * The plan is rebuilt from the file on every attempt (a lost publish re-captures the base and
 * starts over, STORAGE.md §5), so nothing of an earlier attempt leaks into the next.
 */
#include "engine/load.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/ndjson.h"
#include "engine/plan.h"
#include "util/error.h"

og_status og_load_mode_parse(const char *s, og_load_mode *out)
{
    if (s && !strcmp(s, "overwrite")) *out = OG_LOAD_OVERWRITE;
    else if (s && !strcmp(s, "append")) *out = OG_LOAD_APPEND;
    else if (s && !strcmp(s, "merge")) *out = OG_LOAD_MERGE;
    else return og_err(OG_ERR_INVALID, "load mode must be overwrite, append or merge (got '%s')", s ? s : "");
    return OG_OK;
}

const char *og_load_mode_name(og_load_mode m)
{
    return m == OG_LOAD_OVERWRITE ? "overwrite" : m == OG_LOAD_APPEND ? "append" : "merge";
}

typedef struct load_ctx {
    og_engine *e;
    const char *path;
    const og_load_opts *opts;
    og_load_stats stats;
} load_ctx;

static og_status stage_record(og_plan *p, const og_ndjson_record *rec, og_load_mode mode, og_load_stats *stats)
{
    char w[300];
    snprintf(w, sizeof w, "%s:%llu", p->source, (unsigned long long)rec->line);
    og_plan_table *pt;
    if (rec->kind == OG_NDJSON_NODE) {
        const og_cat_type *t = og_catalog_node(p->cat, rec->type);
        if (!t) return og_err(OG_ERR_INVALID, "%s: unknown node type '%s'", w, rec->type);
        pt = &p->nodes[t - p->cat->nodes];
    } else {
        const og_cat_type *t = og_catalog_edge_ci(p->cat, rec->type, strlen(rec->type));
        if (!t) return og_err(OG_ERR_INVALID, "%s: unknown edge type '%s'", w, rec->type);
        pt = &p->edges[t - p->cat->edges];
    }
    if (mode == OG_LOAD_OVERWRITE && !pt->overwrite) OG_TRY(og_plan_overwrite(p, pt));
    uint32_t row;
    long prev;
    OG_TRY(og_plan_stage_json(p, pt, rec->data, rec->from, rec->to, rec->line, &row, &prev));
    size_t idlen;
    const char *id = og_plan_staged_id(pt, row, &idlen);
    if (prev >= 0) {
        if (!pt->is_edge && pt->t->nkey)
            return og_err(OG_ERR_CONSTRAINT, "%s: @unique violation on %s key: '%.*s' appears twice in the input (lines %llu and %llu)",
                          w, pt->t->name, (int)idlen, id, (unsigned long long)pt->lines[prev], (unsigned long long)rec->line);
        if (mode != OG_LOAD_MERGE)
            return og_err(OG_ERR_CONSTRAINT, "%s: duplicate %s id '%.*s' (also on line %llu)", w, pt->t->name, (int)idlen,
                          id, (unsigned long long)pt->lines[prev]);
        og_plan_supersede(pt, (uint32_t)prev);
        return OG_OK; /* counted when first seen */
    }
    long crow = og_plan_committed_find(p, pt, id, idlen);
    if (crow >= 0) {
        if (mode == OG_LOAD_APPEND)
            return og_err(OG_ERR_ALREADY_EXISTS, "%s: key_conflict: %s '%.*s' already exists (append is a strict insert; use merge to upsert)",
                          w, pt->t->name, (int)idlen, id);
        OG_TRY(og_plan_remove_committed(p, pt, (uint32_t)crow));
        stats->updated++;
    } else {
        stats->inserted++;
    }
    return OG_OK;
}

static og_status load_attempt(void *vctx, og_graph *g, const og_snapshot *base, og_commit_draft *draft, int attempt)
{
    (void)g;
    (void)attempt;
    load_ctx *c = vctx;
    memset(&c->stats, 0, sizeof c->stats);
    FILE *f = fopen(c->path, "rb");
    if (!f) return og_err_errno(errno, "cannot open %s", c->path);
    og_read *r = NULL;
    og_ndjson_reader *nr = NULL;
    og_plan plan;
    memset(&plan, 0, sizeof plan);
    og_status st = og_read_begin_at(&r, c->e, base);
    if (st == OG_OK) st = og_plan_init(&plan, r, c->path);
    if (st == OG_OK) st = og_ndjson_reader_new(&nr, f, c->path);
    while (st == OG_OK) {
        og_ndjson_record rec;
        int k = og_ndjson_next(nr, &rec, &st);
        if (k <= 0) break;
        c->stats.records++;
        st = stage_record(&plan, &rec, c->opts->mode, &c->stats);
        if (c->opts->progress && c->stats.records % 100000 == 0)
            fprintf(stderr, "load: %llu records (%llu bytes)\n", (unsigned long long)c->stats.records,
                    (unsigned long long)og_ndjson_bytes_read(nr));
    }
    if (st == OG_OK) st = og_plan_validate(&plan);
    size_t ntables = 0;
    if (st == OG_OK) st = og_plan_write(&plan, draft, &ntables);
    if (st == OG_OK) st = og_draft_set_operation(draft, OG_OP_LOAD, og_load_mode_name(c->opts->mode));
    if (st == OG_OK) st = og_draft_set_stat(draft, "records", (int64_t)c->stats.records);
    if (st == OG_OK) st = og_draft_set_stat(draft, "inserted", (int64_t)c->stats.inserted);
    if (st == OG_OK) st = og_draft_set_stat(draft, "updated", (int64_t)c->stats.updated);
    og_ndjson_reader_free(nr);
    og_plan_free(&plan);
    og_read_end(r);
    fclose(f);
    return st;
}

og_status og_engine_load(og_engine *e, const char *path, const og_load_opts *opts, og_write_result *out,
                         og_load_stats *stats)
{
    const char *branch = opts->branch ? opts->branch : "main";
    if (opts->mode < OG_LOAD_OVERWRITE || opts->mode > OG_LOAD_MERGE)
        return og_err(OG_ERR_INVALID, "a load mode is required: overwrite, append or merge");
    if (opts->from) {
        og_ref_entry head;
        og_status st = og_graph_head_entry(og_engine_graph(e), branch, &head);
        if (st == OG_ERR_NOT_FOUND || (st == OG_OK && head.kind == OG_REF_DELETE))
            OG_TRY(og_branch_create(og_engine_graph(e), branch, opts->from, NULL, og_engine_actor(e), NULL));
        else if (st)
            return st;
    }
    load_ctx c = {e, path, opts, {0}};
    og_write_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.branch = branch;
    wo.actor = og_engine_actor(e);
    wo.expected_head = opts->expected_head;
    og_status st = og_graph_write(og_engine_graph(e), &wo, load_attempt, &c, out);
    if (stats) *stats = c.stats;
    return st;
}
