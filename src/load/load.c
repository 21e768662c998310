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
#include "load/load.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "load/csv_load.h"
#include "load/ndjson.h"
#include "engine/batch_index.h"
#include "engine/plan.h"
#include "engine/tableview.h"
#include "compiler/suggest.h"
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
    const char *path;                /* NDJSON, or NULL for a CSV load */
    const og_load_csv_file *csv;     /* CSV files (docs/load.md "CSV") */
    size_t ncsv;
    char delim;
    const char **csv_names;          /* the files' paths, for messages (plan.sources) */
    const og_load_opts *opts;
    og_load_stats stats;
    /* What the attempt that published leaves for the graph indexes written after the publish
     * (load_graph_indexes): per edge type the endpoint rows its RI check found (NULL: not
     * captured), and the node types whose new image is exactly their staged rows. */
    uint32_t *(*end_rows)[2];
    int (*end_fds)[2];  /* or the spill files holding them (og_plan_table.end_rows_in_files); -1: none */
    size_t nedges;
    uint8_t *node_image;
    size_t nnodes;
    uint64_t flushes;   /* of that attempt, for the "indexing" progress call */
    uint64_t captured_edges; /* rows of the edge types whose end_rows were captured */
    int attempt;
    /* The key-map and text-index builder of the attempt whose callback succeeded (og_plan.side),
     * settled once its publish is decided (settle_side): never waited for before it. */
    og_batch_index *side;
} load_ctx;

/* The builder of the last attempt: its files kept when that attempt published, deleted when
 * not (docs/load.md "Indexes of flushed batches").  Returns st with its message kept (the
 * deletes may overwrite the thread's last error). */
static og_status settle_side(load_ctx *c, int published, og_status st)
{
    if (!c->side) return st;
    char saved[2048] = "";
    if (st != OG_OK) snprintf(saved, sizeof saved, "%s", og_error_message());
    if (!published) og_batch_index_discard(c->side);
    og_batch_index_free(c->side);
    c->side = NULL;
    if (st != OG_OK) og_err(st, "%s", saved);
    return st;
}

static unsigned long long file_size(const char *path);

/* The most captured edges whose topology is built beside og_db_load's text indexes. */
#define LOAD_INDEX_SIDE_BY_SIDE_EDGES ((uint64_t)8 << 20)

/* Frees per edge type captured endpoint rows and closes their spill files. */
static void end_inputs_free(uint32_t *(*end_rows)[2], int (*end_fds)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            if (end_rows) free(end_rows[i][k]);
            if (end_fds && end_fds[i][k] >= 0) close(end_fds[i][k]);
        }
    free(end_rows);
    free(end_fds);
}

static void graph_index_inputs_free(load_ctx *c)
{
    end_inputs_free(c->end_rows, c->end_fds, c->nedges);
    free(c->node_image);
    c->end_rows = NULL;
    c->end_fds = NULL;
    c->node_image = NULL;
    c->nedges = c->nnodes = 0;
    c->captured_edges = 0;
}

/* Takes the plan's captured endpoint rows and notes which node types it wrote whole, for the
 * graph indexes (best effort: without memory there are none, and the first reader builds). */
static void graph_index_inputs_take(load_ctx *c, og_plan *plan, int attempt)
{
    graph_index_inputs_free(c);
    c->flushes = plan->flushes;
    c->attempt = attempt;
    size_t ne = plan->cat->nedges, nn = plan->cat->nnodes;
    c->end_rows = calloc(ne ? ne : 1, sizeof *c->end_rows);
    c->end_fds = malloc((ne ? ne : 1) * sizeof *c->end_fds);
    c->node_image = calloc(nn ? nn : 1, 1);
    if (!c->end_rows || !c->end_fds || !c->node_image) {
        graph_index_inputs_free(c);
        return;
    }
    c->nedges = ne, c->nnodes = nn;
    for (size_t i = 0; i < ne; i++) {
        og_plan_table *et = &plan->edges[i];
        c->end_fds[i][0] = c->end_fds[i][1] = -1;
        if (et->end_rows[0] || et->end_rows_in_files) c->captured_edges += et->nstaged;
        c->end_rows[i][0] = et->end_rows[0];
        c->end_rows[i][1] = et->end_rows[1];
        et->end_rows[0] = et->end_rows[1] = NULL;
        if (et->end_rows_in_files) { /* the files are the load's now (og_plan_free closes none) */
            c->end_fds[i][0] = et->ends_fd[0], c->end_fds[i][1] = et->ends_fd[1];
            et->ends_fd[0] = et->ends_fd[1] = -1;
            et->ends_spilled = et->end_rows_in_files = 0;
        }
    }
    for (size_t i = 0; i < nn; i++) c->node_image[i] = (uint8_t)og_plan_staged_is_image(plan, &plan->nodes[i]);
    og_error_clear();
}

/* The graph indexes of a published load (og_load_stats.index_job when deferred): what the
 * attempt that published captured, and its commit. */
struct og_load_index_job {
    og_engine *e;
    char commit[OG_ULID_LEN + 1];
    uint32_t *(*end_rows)[2];
    int (*end_fds)[2];
    size_t nedges;
    uint8_t *node_image;
    size_t nnodes;
    pthread_t th;
    int threaded;
};

/* After the publish (INVARIANTS.md 7: never on its path): the topology of every edge type whose
 * endpoint rows the RI check captured, then the key maps of every node type the load wrote
 * whole (built here from its data files),
 * so the first query after a bulk load opens both instead of building them (docs/load.md
 * "Graph indexes").  Derived state: every failure is ignored (the first reader builds).  Reads
 * through the engine's shared cache and views only, so it may run on its own thread. */
static void *index_job_run(void *arg)
{
    og_load_index_job *j = arg;
    og_read *r;
    if (og_read_begin(&r, j->e, NULL, j->commit) != OG_OK) {
        og_error_clear();
        return NULL;
    }
    const og_catalog *cat = og_read_catalog(r);
    /* the topologies first: their build's memory then stacks on no key map */
    for (size_t k = 0; k < j->nedges && k < cat->nedges; k++) {
        int in_files = j->end_fds[k][0] >= 0;
        if (!j->end_rows[k][0] && !in_files) continue;
        const og_cat_type *et = &cat->edges[k];
        og_tableview *ev, *fv, *tv;
        if (og_read_edge_view(r, k, &ev) == OG_OK && og_read_node_view(r, et->from_node, &fv) == OG_OK &&
            og_read_node_view(r, et->to_node, &tv) == OG_OK) {
            if (in_files) (void)og_tableview_save_topology_files(ev, fv, tv, j->end_fds[k], og_tableview_rows(ev));
            else (void)og_tableview_save_topology_rows(ev, fv, tv, j->end_rows[k], og_tableview_rows(ev));
        }
        og_error_clear();
    }
    for (size_t i = 0; i < j->nnodes && i < cat->nnodes; i++) {
        og_tableview *v;
        if (j->node_image[i] && og_read_node_view(r, i, &v) == OG_OK && og_tableview_rows(v))
            (void)og_tableview_prepare_keys(v, 1);
        og_error_clear();
    }
    og_read_end(r);
    return NULL;
}

void og_engine_load_indexes_join(og_load_index_job *j)
{
    if (!j) return;
    if (j->threaded) pthread_join(j->th, NULL);
    end_inputs_free(j->end_rows, j->end_fds, j->nedges);
    free(j->node_image);
    free(j);
}

/* Starts (defer: on a thread, returned) or runs (returns NULL) the graph indexes of the load
 * that published `commit`, taking c's captured inputs. */
static og_load_index_job *load_graph_indexes(load_ctx *c, const char *commit, int defer)
{
    if (og_tableview_index_mode() != 2) return NULL;
    int any = 0;
    for (size_t i = 0; i < c->nnodes; i++) any |= c->node_image[i];
    for (size_t k = 0; k < c->nedges; k++) any |= c->end_rows[k][0] != NULL || c->end_fds[k][0] >= 0;
    if (!any) return NULL;
    if (c->opts->on_progress) {
        unsigned long long total = 0;
        if (c->path) total = file_size(c->path);
        for (size_t i = 0; i < c->ncsv; i++) total += file_size(c->csv[i].path);
        og_load_progress p = {"indexing", c->stats.records, total, total, c->flushes, c->attempt};
        c->opts->on_progress(c->opts->progress_ctx, &p);
    }
    og_load_index_job *j = calloc(1, sizeof *j);
    if (!j) return NULL; /* derived: the first reader builds */
    j->e = c->e;
    snprintf(j->commit, sizeof j->commit, "%s", commit);
    j->end_rows = c->end_rows, j->end_fds = c->end_fds, j->nedges = c->nedges, j->node_image = c->node_image;
    j->nnodes = c->nnodes;
    uint64_t edges = c->captured_edges;
    c->end_rows = NULL, c->end_fds = NULL, c->node_image = NULL, c->nedges = c->nnodes = 0;
    /* A large topology is built before the text indexes, not beside them: its build (~30
     * bytes an edge besides the 8 of end_rows) stacked on theirs was a 25M-edge load's peak
     * (docs/load.md "The memory bound"); below that the two overlap for time. */
    if (defer && edges <= LOAD_INDEX_SIDE_BY_SIDE_EDGES && pthread_create(&j->th, NULL, index_job_run, j) == 0) {
        j->threaded = 1;
        return j;
    }
    index_job_run(j);
    og_engine_load_indexes_join(j);
    return NULL;
}

#define LOAD_FLUSH_ROWS_DEFAULT ((size_t)64 << 10)
#define LOAD_FLUSH_BYTES_DEFAULT ((size_t)64 << 20)
#define LOAD_EDGE_FLUSH_ROWS_DEFAULT ((size_t)512 << 10)
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
    return og_plan_where(p, rec->line, buf, cap);
}

/* A line of the input as a message shows it: "12", or "people.csv:12" in a multi-file load. */
static const char *line_at(const og_plan *p, uint64_t line, char *buf, size_t cap)
{
    if (!p->nsources) snprintf(buf, cap, "%llu", (unsigned long long)line);
    else og_plan_where(p, line, buf, cap);
    return buf;
}

static og_status stage_record(og_plan *p, const og_ndjson_record *rec, og_load_mode mode, og_load_stats *stats,
                              og_plan_table **out)
{
    char at[300], l1[300], l2[300];
    og_plan_table *pt;
    if (rec->kind == OG_NDJSON_NODE) {
        const og_cat_type *t = og_catalog_node(p->cat, rec->type);
        char hint[96];
        if (!t)
            return og_err(OG_ERR_INVALID, "%s: unknown node type '%s'%s", rec_at(p, rec, at, sizeof at), rec->type,
                          og_suggest_hint(og_suggest_node(p->cat, rec->type), hint, sizeof hint));
        pt = &p->nodes[t - p->cat->nodes];
        for (size_t i = 0; i < t->nprops && !stats->embed_touched; i++)
            if (t->props[i].embed_source) stats->embed_touched = 1;
    } else {
        const og_cat_type *t = og_catalog_edge_ci(p->cat, rec->type, strlen(rec->type));
        char hint[96];
        if (!t)
            return og_err(OG_ERR_INVALID, "%s: unknown edge type '%s'%s", rec_at(p, rec, at, sizeof at), rec->type,
                          og_suggest_hint(og_suggest_edge(p->cat, rec->type), hint, sizeof hint));
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
            return og_err(OG_ERR_CONSTRAINT, "%s: @unique violation on %s key: '%.*s' appears twice in the input (lines %s and %s)",
                          rec_at(p, rec, at, sizeof at), pt->t->name, (int)idlen, id, line_at(p, og_plan_line(pt, (size_t)prev), l1, sizeof l1),
                          line_at(p, rec->line, l2, sizeof l2));
        if (mode != OG_LOAD_MERGE)
            return og_err(OG_ERR_CONSTRAINT, "%s: duplicate %s id '%.*s' (also on line %s)", rec_at(p, rec, at, sizeof at), pt->t->name, (int)idlen,
                          id, line_at(p, og_plan_line(pt, (size_t)prev), l1, sizeof l1));
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
static void tell(load_ctx *c, const char *stage, uint64_t done, unsigned long long total, const og_plan *plan, int attempt)
{
    og_load_progress p = {stage, c->stats.records, done, total, (uint64_t)plan->flushes, attempt};
    c->opts->on_progress(c->opts->progress_ctx, &p);
}

/* The per-record budget and progress duties once `n` more records are staged (the counts
 * crossed on the way, as if each record had been counted by itself). */
static og_status after_records(load_ctx *c, og_plan *plan, size_t n, uint64_t done, unsigned long long total, int attempt)
{
    const uint64_t every = c->opts->progress_every ? c->opts->progress_every : 10000;
    uint64_t before = c->stats.records;
    c->stats.records += n;
    uint64_t now = c->stats.records;
    /* crossed a multiple of m on the way from `before` to `now` */
#define CROSSED(m) (now / (m) != before / (m))
    /* the load's budgets (util/budget.h): the clock on every record (read every 64th),
     * what the plan holds every 256 records */
    og_status st = og_budget_check();
    if (st == OG_OK && CROSSED(256)) st = og_budget_track(og_plan_mem_bytes(plan));
    if (st == OG_OK && c->opts->on_progress && CROSSED(every)) tell(c, "reading", done, total, plan, attempt);
    if (c->opts->progress && CROSSED(LOAD_PROGRESS_EVERY)) {
#undef CROSSED
        if (total)
            fprintf(stderr, "load: %llu records (%llu / %llu bytes, %.0f%%; flushed batches: %llu)\n",
                    (unsigned long long)c->stats.records, (unsigned long long)done, total, 100.0 * (double)done / (double)total,
                    (unsigned long long)plan->flushes);
        else
            fprintf(stderr, "load: %llu records (%llu bytes; flushed batches: %llu)\n", (unsigned long long)c->stats.records,
                    (unsigned long long)done, (unsigned long long)plan->flushes);
    }
    return st;
}

/* Stages one record read from the input, then the per-record budget and progress duties;
 * *pt is its type's plan table. */
static og_status take_record(load_ctx *c, og_plan *plan, const og_ndjson_record *rec, uint64_t done,
                             unsigned long long total, int attempt, og_plan_table **pt)
{
    *pt = NULL;
    og_status st = stage_record(plan, rec, c->opts->mode, &c->stats, pt);
    if (st == OG_OK) st = og_plan_maybe_flush(plan, *pt);
    if (st != OG_OK) {
        c->stats.records++;
        return st;
    }
    return after_records(c, plan, 1, done, total, attempt);
}

/* The input a run of edges is peeked from: the NDJSON reader or a CSV source. */
typedef struct rec_source {
    og_ndjson_reader *nd;
    og_csv_source *cs;
    uint64_t bytes_before; /* of the files before this one (CSV) */
} rec_source;

static const og_ndjson_record *src_peek(const rec_source *s, size_t k)
{
    return s->nd ? og_ndjson_peek(s->nd, k) : og_csv_source_peek(s->cs, k);
}

static uint64_t src_bytes(const rec_source *s)
{
    return s->bytes_before + (s->nd ? og_ndjson_bytes_read(s->nd) : og_csv_source_bytes(s->cs));
}

#define EDGE_RUN 256

/* After `first`, an edge of pt just staged: stages the edges that follow it in the parsed
 * batch at hand — same type name, no id, no data — in bulk (og_plan_stage_edges, docs/load.md
 * "Edges in bulk"), as many og_plan_stage_json calls would: a load of 5M edges spent more on
 * each record's dispatch and checks than on the row itself. */
static og_status take_edge_run(load_ctx *c, og_plan *plan, og_plan_table *pt, const og_ndjson_record *first,
                               rec_source *src, unsigned long long total, int attempt)
{
    if (first->kind != OG_NDJSON_EDGE || first->id || first->data->len || !og_plan_edges_bulk_ok(pt)) return OG_OK;
    const char *type = first->type; /* in the batch the run is peeked from */
    const char *from[EDGE_RUN], *to[EDGE_RUN];
    size_t len[2 * EDGE_RUN];
    uint64_t line[EDGE_RUN];
    const uint64_t every = c->opts->progress_every ? c->opts->progress_every : 10000;
    for (;;) {
        /* a run ends where a budget or progress duty falls due, so it is done on the same record */
        uint64_t rec = c->stats.records;
        size_t max = EDGE_RUN;
        if (256 - rec % 256 < max) max = (size_t)(256 - rec % 256);
        if (c->opts->on_progress && every - rec % every < max) max = (size_t)(every - rec % every);
        if (c->opts->progress && LOAD_PROGRESS_EVERY - rec % LOAD_PROGRESS_EVERY < max)
            max = (size_t)(LOAD_PROGRESS_EVERY - rec % LOAD_PROGRESS_EVERY);
        size_t n = 0;
        const og_ndjson_record *r;
        while (n < max && (r = src_peek(src, n)) && r->kind == OG_NDJSON_EDGE && !r->id && !r->data->len &&
               (r->type == type || !strcmp(r->type, type))) {
            from[n] = r->from, to[n] = r->to, line[n] = r->line;
            len[2 * n] = r->from_len, len[2 * n + 1] = r->to_len;
            n++;
        }
        if (!n) return OG_OK;
        OG_TRY(og_plan_stage_edges(plan, pt, n, from, to, len, line));
        if (src->nd) og_ndjson_skip(src->nd, n);
        else og_csv_source_skip(src->cs, n);
        c->stats.inserted += n;
        OG_TRY(after_records(c, plan, n, src_bytes(src), total, attempt));
    }
}

static unsigned long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (unsigned long long)sb.st_size : 0;
}

/* Reads the NDJSON file into the plan. */
static og_status read_ndjson(load_ctx *c, og_plan *plan, uint64_t *done, unsigned long long total, int attempt)
{
    FILE *f = fopen(c->path, "rb");
    if (!f) return og_err_errno(errno, "cannot open %s", c->path);
    og_ndjson_reader *nr = NULL;
    og_status st = og_ndjson_reader_new(&nr, f, c->path);
    if (st == OG_OK) st = og_ndjson_reader_start(nr);
    rec_source src = {.nd = nr};
    while (st == OG_OK) {
        og_ndjson_record rec;
        og_plan_table *pt;
        int k = og_ndjson_next(nr, &rec, &st);
        if (k <= 0) break;
        st = take_record(c, plan, &rec, og_ndjson_bytes_read(nr), total, attempt, &pt);
        if (st == OG_OK) st = take_edge_run(c, plan, pt, &rec, &src, total, attempt);
    }
    if (nr) *done = og_ndjson_bytes_read(nr);
    og_ndjson_reader_free(nr);
    fclose(f);
    return st;
}

/* Reads every CSV file, in order, into the plan. */
static og_status read_csv(load_ctx *c, og_plan *plan, uint64_t *done, unsigned long long total, int attempt)
{
    og_status st = OG_OK;
    uint64_t before = 0;
    for (size_t i = 0; st == OG_OK && i < c->ncsv; i++) {
        og_csv_source *cs = NULL;
        st = og_csv_source_open(&cs, plan->cat, c->csv[i].type, c->csv[i].path, c->delim, (uint32_t)i);
        if (st == OG_OK) st = og_csv_source_start(cs, 0); /* parse on worker threads (docs/load.md) */
        rec_source src = {.cs = cs, .bytes_before = before};
        while (st == OG_OK) {
            og_ndjson_record rec;
            og_plan_table *pt;
            int k = og_csv_source_next(cs, &rec, &st);
            if (k <= 0) break;
            st = take_record(c, plan, &rec, before + og_csv_source_bytes(cs), total, attempt, &pt);
            if (st == OG_OK) st = take_edge_run(c, plan, pt, &rec, &src, total, attempt);
        }
        if (cs) before += og_csv_source_bytes(cs);
        og_csv_source_free(cs);
    }
    *done = before;
    return st;
}

static og_status load_attempt(void *vctx, og_graph *g, const og_snapshot *base, og_commit_draft *draft, int attempt)
{
    (void)g;
    load_ctx *c = vctx;
    memset(&c->stats, 0, sizeof c->stats);
    unsigned long long total = 0;
    if (c->path) total = file_size(c->path);
    for (size_t i = 0; i < c->ncsv; i++) total += file_size(c->csv[i].path);
    uint64_t done = 0;
    og_read *r = NULL;
    og_plan plan;
    memset(&plan, 0, sizeof plan);
    og_status st = og_read_begin_at(&r, c->e, base);
    if (st == OG_OK) st = og_plan_init(&plan, r, c->path ? c->path : c->ncsv ? c->csv[0].path : NULL);
    if (st == OG_OK && !c->path) {
        plan.sources = c->csv_names;
        plan.nsources = c->ncsv;
    }
    if (st == OG_OK) st = env_size("OG_LOAD_FLUSH_ROWS", LOAD_FLUSH_ROWS_DEFAULT, &plan.flush_rows);
    if (st == OG_OK) st = env_size("OG_LOAD_FLUSH_BYTES", LOAD_FLUSH_BYTES_DEFAULT, &plan.flush_bytes);
    /* Edge batches are 8x a node batch unless OG_LOAD_FLUSH_ROWS is set (tests count files):
     * each flushed batch is a fragment, and a reader decodes every fragment of the manifest
     * before its first traversal — 763 of them at 50M edges was most of a fresh process's
     * first 1-hop (docs/load.md "Flow").  An edge row in a batch is ~40 bytes. */
    if (st == OG_OK) {
        const char *rows = getenv("OG_LOAD_FLUSH_ROWS");
        st = env_size("OG_LOAD_EDGE_FLUSH_ROWS", rows && *rows ? plan.flush_rows : LOAD_EDGE_FLUSH_ROWS_DEFAULT,
                      &plan.edge_flush_rows);
    }
    plan.capture_topology = og_tableview_index_mode() == 2;
    /* compact endpoints go to temp files beside the data (docs/load.md "The memory bound");
     * OG_LOAD_SPILL=0 keeps them in memory */
    const char *spill = getenv("OG_LOAD_SPILL");
    og_store *store = og_engine_store(c->e);
    if (!(spill && !strcmp(spill, "0")) && og_store_is_local(store)) plan.spill_dir = og_store_uri(store);
    plan.no_text_index = c->opts->no_index; /* --no-index: no text index, beside the load either */
    graph_index_inputs_free(c); /* an earlier attempt's (its publish was lost) */
    (void)settle_side(c, 0, OG_OK); /* likewise */
    if (st == OG_OK) st = c->path ? read_ndjson(c, &plan, &done, total, attempt) : read_csv(c, &plan, &done, total, attempt);
    /* A file without records changes nothing and publishes nothing (like a mutation that
     * matches nothing) — in every mode: overwrite replaces only the types the file holds. */
    int empty = st == OG_OK && c->stats.records == 0;
    if (empty) og_draft_set_noop(draft);
    if (st == OG_OK && !empty) st = og_budget_track(og_plan_mem_bytes(&plan));
    if (st == OG_OK && !empty) {
        size_t ntables = 0;
        if (c->opts->on_progress) tell(c, "validating", done, total, &plan, attempt);
        st = og_plan_validate(&plan);
        if (st == OG_OK && c->opts->on_progress) tell(c, "writing", done, total, &plan, attempt);
        if (st == OG_OK) st = og_plan_write(&plan, draft, &ntables);
        if (st == OG_OK) st = og_draft_set_operation(draft, OG_OP_LOAD, og_load_mode_name(c->opts->mode));
        if (st == OG_OK) st = og_draft_set_stat(draft, "records", (int64_t)c->stats.records);
        if (st == OG_OK) st = og_draft_set_stat(draft, "inserted", (int64_t)c->stats.inserted);
        if (st == OG_OK) st = og_draft_set_stat(draft, "updated", (int64_t)c->stats.updated);
        if (st == OG_OK) graph_index_inputs_take(c, &plan, attempt);
    }
    if (st == OG_OK) { /* it goes on beside the publish; a failed attempt's is joined below */
        c->side = plan.side;
        plan.side = NULL;
    }
    og_plan_free(&plan);
    og_read_end(r);
#ifdef __GLIBC__
    /* hand the plan's freed heap back to the system before the graph indexes and the next
     * steps allocate theirs: glibc keeps it otherwise, and at 5M edges that kept ~300 MB
     * resident through the rest of the load (docs/load.md "The memory bound") */
    malloc_trim(0);
#endif
    return st;
}

static og_status run_load(load_ctx *c, og_write_result *out, og_load_stats *stats, og_load_index_job **job)
{
    if (job) *job = NULL;
    og_engine *e = c->e;
    const og_load_opts *opts = c->opts;
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
    og_write_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.branch = branch;
    wo.actor = og_engine_actor(e);
    wo.actor_via = og_engine_actor_via(e);
    wo.message = og_engine_message();
    wo.expected_head = opts->expected_head;
    og_write_result local;
    if (!out) out = &local;
    memset(out, 0, sizeof *out);
    og_status st = og_graph_write(og_engine_graph(e), &wo, load_attempt, c, out);
    /* before the graph and text indexes after the publish, which then find its files */
    st = settle_side(c, st == OG_OK && out->published, st);
    og_load_index_job *j = NULL;
    if (st == OG_OK && out->published) j = load_graph_indexes(c, out->commit, job != NULL);
    if (job) *job = j;
    graph_index_inputs_free(c);
    if (stats) *stats = c->stats;
    return st;
}

og_status og_engine_load_deferred(og_engine *e, const char *path, const og_load_opts *opts, og_write_result *out,
                                  og_load_stats *stats, og_load_index_job **job)
{
    load_ctx c = {.e = e, .path = path, .opts = opts};
    return run_load(&c, out, stats, job);
}

og_status og_engine_load(og_engine *e, const char *path, const og_load_opts *opts, og_write_result *out,
                         og_load_stats *stats)
{
    return og_engine_load_deferred(e, path, opts, out, stats, NULL);
}

og_status og_engine_load_csv(og_engine *e, const og_load_csv_file *files, size_t nfiles, char delim,
                             const og_load_opts *opts, og_write_result *out, og_load_stats *stats)
{
    return og_engine_load_csv_deferred(e, files, nfiles, delim, opts, out, stats, NULL);
}

og_status og_engine_load_csv_deferred(og_engine *e, const og_load_csv_file *files, size_t nfiles, char delim,
                                      const og_load_opts *opts, og_write_result *out, og_load_stats *stats,
                                      og_load_index_job **job)
{
    if (job) *job = NULL;
    if (!files || !nfiles) return og_err(OG_ERR_INVALID, "a CSV load needs at least one file");
    if (nfiles >= ((size_t)1 << (64 - OG_PLAN_LINE_BITS))) return og_err(OG_ERR_LIMIT, "too many CSV files in one load");
    for (size_t i = 0; i < nfiles; i++)
        if (!files[i].path || !*files[i].path) return og_err(OG_ERR_INVALID, "CSV file %zu has no path", i + 1);
    const char **names = malloc(nfiles * sizeof *names);
    if (!names) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < nfiles; i++) names[i] = files[i].path;
    load_ctx c = {.e = e, .csv = files, .ncsv = nfiles, .delim = delim ? delim : ',', .csv_names = names, .opts = opts};
    og_status st = run_load(&c, out, stats, job);
    free(names);
    return st;
}
