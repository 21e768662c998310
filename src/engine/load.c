/*
 * load.c — NDJSON load through the write protocol.  See load.h.
 *
 * The plan is rebuilt from the file on every attempt (a lost publish re-captures the base and
 * starts over, STORAGE.md §5), so nothing of an earlier attempt leaks into the next.
 *
 * Streaming (docs/load.md): records are read one line at a time and a type's staged rows are
 * flushed to data files of that type's table txn whenever they reach the flush budget
 * (OG_LOAD_FLUSH_ROWS rows, default 65,536, or OG_LOAD_FLUSH_BYTES bytes of property data,
 * default 64 MiB — both overridable by those environment variables, for tests and tuning).
 * Only ids, edge endpoints and @unique values stay in memory for validation, which still runs
 * over the whole file before the commit is written; the flushed files are unreachable until
 * the publish, so a failed load publishes nothing and leaves only garbage for cleanup.
 */
#include "engine/load.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/ndjson.h"
#include "engine/plan.h"
#include "util/budget.h"
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

#define LOAD_FLUSH_ROWS_DEFAULT ((size_t)64 << 10)
#define LOAD_FLUSH_BYTES_DEFAULT ((size_t)64 << 20)
#define LOAD_PROGRESS_EVERY 100000

/* A positive size from environment variable `name`, else `dflt`; a malformed value is
 * OG_ERR_INVALID (never silently ignored). */
static og_status env_size(const char *name, size_t dflt, size_t *out)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v || !*v) return OG_OK;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x == 0 || v[0] == '-' || x > SIZE_MAX)
        return og_err(OG_ERR_INVALID, "%s must be a positive integer (got '%s')", name, v);
    *out = (size_t)x;
    return OG_OK;
}

/* "file:line" of rec, for a message (formatted only when one is made). */
static const char *rec_at(const og_plan *p, const og_ndjson_record *rec, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s:%llu", p->source, (unsigned long long)rec->line);
    return buf;
}

static og_status stage_record(og_plan *p, const og_ndjson_record *rec, og_load_mode mode, og_load_stats *stats,
                              og_plan_table **out)
{
    char at[300];
    og_plan_table *pt;
    if (rec->kind == OG_NDJSON_NODE) {
        const og_cat_type *t = og_catalog_node(p->cat, rec->type);
        if (!t) return og_err(OG_ERR_INVALID, "%s: unknown node type '%s'", rec_at(p, rec, at, sizeof at), rec->type);
        pt = &p->nodes[t - p->cat->nodes];
        for (size_t i = 0; i < t->nprops && !stats->embed_touched; i++)
            if (t->props[i].embed_source) stats->embed_touched = 1;
    } else {
        const og_cat_type *t = og_catalog_edge_ci(p->cat, rec->type, strlen(rec->type));
        if (!t) return og_err(OG_ERR_INVALID, "%s: unknown edge type '%s'", rec_at(p, rec, at, sizeof at), rec->type);
        pt = &p->edges[t - p->cat->edges];
    }
    *out = pt;
    if (mode == OG_LOAD_OVERWRITE && !pt->overwrite) OG_TRY(og_plan_overwrite(p, pt));
    uint32_t row;
    long prev;
    OG_TRY(og_plan_stage_json(p, pt, rec->data, rec->id, rec->from, rec->to, rec->line, &row, &prev));
    size_t idlen;
    const char *id = og_plan_staged_id(pt, row, &idlen);
    if (prev >= 0) {
        if (!pt->is_edge && pt->t->nkey)
            return og_err(OG_ERR_CONSTRAINT, "%s: @unique violation on %s key: '%.*s' appears twice in the input (lines %llu and %llu)",
                          rec_at(p, rec, at, sizeof at), pt->t->name, (int)idlen, id, (unsigned long long)pt->lines[prev], (unsigned long long)rec->line);
        if (mode != OG_LOAD_MERGE)
            return og_err(OG_ERR_CONSTRAINT, "%s: duplicate %s id '%.*s' (also on line %llu)", rec_at(p, rec, at, sizeof at), pt->t->name, (int)idlen,
                          id, (unsigned long long)pt->lines[prev]);
        og_plan_supersede(pt, (uint32_t)prev);
        return OG_OK; /* counted when first seen */
    }
    long crow = pt->last_generated ? -1 : og_plan_committed_find(p, pt, id, idlen);
    if (crow >= 0) {
        if (mode == OG_LOAD_APPEND)
            return og_err(OG_ERR_ALREADY_EXISTS, "%s: key_conflict: %s '%.*s' already exists (append is a strict insert; use merge to upsert)",
                          rec_at(p, rec, at, sizeof at), pt->t->name, (int)idlen, id);
        OG_TRY(og_plan_remove_committed(p, pt, (uint32_t)crow));
        stats->updated++;
    } else {
        stats->inserted++;
    }
    return OG_OK;
}

/* og_load_opts.on_progress, with the attempt's counts. */
static void tell(load_ctx *c, const char *stage, og_ndjson_reader *nr, unsigned long long total, const og_plan *plan,
                 int attempt)
{
    og_load_progress p = {stage, c->stats.records, nr ? (uint64_t)og_ndjson_bytes_read(nr) : 0, total,
                          (uint64_t)plan->flushes, attempt};
    c->opts->on_progress(c->opts->progress_ctx, &p);
}

static og_status load_attempt(void *vctx, og_graph *g, const og_snapshot *base, og_commit_draft *draft, int attempt)
{
    (void)g;
    load_ctx *c = vctx;
    const uint64_t every = c->opts->progress_every ? c->opts->progress_every : 10000;
    memset(&c->stats, 0, sizeof c->stats);
    FILE *f = fopen(c->path, "rb");
    if (!f) return og_err_errno(errno, "cannot open %s", c->path);
    struct stat sb;
    unsigned long long total = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) ? (unsigned long long)sb.st_size : 0;
    og_read *r = NULL;
    og_ndjson_reader *nr = NULL;
    og_plan plan;
    memset(&plan, 0, sizeof plan);
    og_status st = og_read_begin_at(&r, c->e, base);
    if (st == OG_OK) st = og_plan_init(&plan, r, c->path);
    if (st == OG_OK) st = env_size("OG_LOAD_FLUSH_ROWS", LOAD_FLUSH_ROWS_DEFAULT, &plan.flush_rows);
    if (st == OG_OK) st = env_size("OG_LOAD_FLUSH_BYTES", LOAD_FLUSH_BYTES_DEFAULT, &plan.flush_bytes);
    if (st == OG_OK) st = og_ndjson_reader_new(&nr, f, c->path);
    if (st == OG_OK) st = og_ndjson_reader_start(nr);
    while (st == OG_OK) {
        og_ndjson_record rec;
        int k = og_ndjson_next(nr, &rec, &st);
        if (k <= 0) break;
        c->stats.records++;
        og_plan_table *pt = NULL;
        st = stage_record(&plan, &rec, c->opts->mode, &c->stats, &pt);
        if (st == OG_OK) st = og_plan_maybe_flush(&plan, pt);
        /* the load's budgets (util/budget.h): the clock on every record (read every 64th),
         * what the plan holds every 256 records */
        if (st == OG_OK) st = og_budget_check();
        if (st == OG_OK && (c->stats.records & 255) == 0) st = og_budget_track(og_plan_mem_bytes(&plan));
        if (st == OG_OK && c->opts->on_progress && c->stats.records % every == 0)
            tell(c, "reading", nr, total, &plan, attempt);
        if (c->opts->progress && c->stats.records % LOAD_PROGRESS_EVERY == 0) {
            unsigned long long done = (unsigned long long)og_ndjson_bytes_read(nr);
            if (total)
                fprintf(stderr, "load: %llu records (%llu / %llu bytes, %.0f%%; flushed batches: %llu)\n",
                        (unsigned long long)c->stats.records, done, total, 100.0 * (double)done / (double)total,
                        (unsigned long long)plan.flushes);
            else
                fprintf(stderr, "load: %llu records (%llu bytes; flushed batches: %llu)\n",
                        (unsigned long long)c->stats.records, done, (unsigned long long)plan.flushes);
        }
    }
    /* A file without records changes nothing and publishes nothing (like a mutation that
     * matches nothing) — in every mode: overwrite replaces only the types the file holds. */
    int empty = st == OG_OK && c->stats.records == 0;
    if (empty) og_draft_set_noop(draft);
    if (st == OG_OK && !empty) st = og_budget_track(og_plan_mem_bytes(&plan));
    if (st == OG_OK && !empty) {
        size_t ntables = 0;
        if (c->opts->on_progress) tell(c, "validating", nr, total, &plan, attempt);
        st = og_plan_validate(&plan);
        if (st == OG_OK && c->opts->on_progress) tell(c, "writing", nr, total, &plan, attempt);
        if (st == OG_OK) st = og_plan_write(&plan, draft, &ntables);
        if (st == OG_OK) st = og_draft_set_operation(draft, OG_OP_LOAD, og_load_mode_name(c->opts->mode));
        if (st == OG_OK) st = og_draft_set_stat(draft, "records", (int64_t)c->stats.records);
        if (st == OG_OK) st = og_draft_set_stat(draft, "inserted", (int64_t)c->stats.inserted);
        if (st == OG_OK) st = og_draft_set_stat(draft, "updated", (int64_t)c->stats.updated);
    }
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
    wo.message = og_engine_message();
    wo.expected_head = opts->expected_head;
    og_status st = og_graph_write(og_engine_graph(e), &wo, load_attempt, &c, out);
    if (stats) *stats = c.stats;
    return st;
}
