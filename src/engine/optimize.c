/*
 * optimize.c — compaction published as one `optimize` commit, and the automatic trigger that
 * keeps small writes from piling up fragments (optimize.h).
 *
 * Why here and not in table/: which tables a commit names, and that the change becomes
 * visible through the branch log, is the graph's business; the table layer only supplies the
 * primitive (og_table_txn_compact) that rewrites fragments into a new version.
 */
#include "engine/optimize.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/catalog.h"
#include "util/error.h"

typedef struct opt_ctx {
    og_engine *e;
    uint64_t target;
    int target_given;   /* og_optimize_opts.target_rows was set: it holds for every table */
    const og_catalog *cat; /* the base commit's schema (for the vector cap), during an attempt */
    size_t tiered; /* og_optimize_opts.tiered */
    og_optimize_report rep; /* of the attempt that publishes */
    void (*hook)(int attempt, void *arg); /* og_optimize_opts.attempt_hook */
    void *hook_arg;
} opt_ctx;

/* Plans and stages the groups of one table; *changed 0 leaves the table alone. */
/* Whether the table in `dir` is a node type's with an ANN-indexed (Vector) property. */
static int has_vector_index(const og_catalog *cat, const char *dir)
{
    for (size_t n = 0; cat && n < cat->nnodes; n++) {
        char buf[256];
        if (strcmp(og_cat_type_table_dir(&cat->nodes[n], buf, sizeof buf), dir)) continue;
        for (size_t k = 0; k < cat->nodes[n].nprops; k++)
            if (cat->nodes[n].props[k].index == OG_INDEX_VECTOR) return 1;
    }
    return 0;
}

static og_status optimize_table_to(opt_ctx *c, const og_table_ref *ref, og_commit_draft *d);

static og_status optimize_table(opt_ctx *c, const og_table_ref *ref, og_commit_draft *d)
{
    /* One ANN graph per data file (index/ann.h): a graph of a million points misses a fifth of
     * the true top-10 at the default beam where 65,536-point graphs (a load's files) miss under
     * 1% (docs/benchmarks.md "Search defaults"), so the default target stops a vector table's
     * data files at that size — compaction still folds small writes together. */
    uint64_t saved = c->target;
    if (!c->target_given && c->target > OG_OPTIMIZE_VECTOR_TARGET_ROWS && has_vector_index(c->cat, ref->dir))
        c->target = OG_OPTIMIZE_VECTOR_TARGET_ROWS;
    og_status st = optimize_table_to(c, ref, d);
    c->target = saved;
    return st;
}

static og_status optimize_table_to(opt_ctx *c, const og_table_ref *ref, og_commit_draft *d)
{
    og_table *tab;
    OG_TRY(og_table_open(&tab, og_engine_store(c->e), ref->dir));
    og_table_set_cache(tab, og_graph_cache(og_engine_graph(c->e)));
    og_manifest m;
    og_manifest_init(&m);
    og_status st = og_table_load(tab, ref->version, &m);
    size_t nf = m.nfragments;
    uint64_t *group = malloc((nf ? nf : 1) * sizeof *group);
    if (st == OG_OK && !group) st = og_err(OG_ERR_NOMEM, "out of memory");
    og_table_txn *x = NULL;
    size_t groups = 0;
    uint64_t rows = 0, dropped = 0;
    size_t i = 0;
    if (st == OG_OK && c->tiered) {
        /* the automatic policy (optimize.h): over the threshold, merge the newest run only */
        size_t small = 0;
        for (size_t k = 0; k < nf; k++) small += m.fragments[k].physical_rows < c->target;
        size_t start = nf;
        uint64_t live = 0;
        while (small > c->tiered && start > 0) {
            const og_fragment *f = &m.fragments[start - 1];
            if (f->physical_rows >= c->target) break;
            uint64_t l = og_fragment_live_rows(f);
            size_t n = nf - start;
            if (n && live + l > c->target) break;
            if (n >= 2 && l > OG_AUTO_OPTIMIZE_FACTOR * live) break;
            live += l;
            start--;
        }
        if (nf - start >= 2) {
            size_t n = nf - start;
            for (size_t k = 0; k < n; k++) group[k] = m.fragments[start + k].id;
            st = og_table_txn_begin(&x, tab, ref->version, NULL);
            uint64_t nid;
            if (st == OG_OK) st = og_table_txn_compact(x, group, n, &nid);
            if (st == OG_OK) {
                groups++;
                rows += live;
                for (size_t k = 0; k < n; k++)
                    dropped += m.fragments[start + k].physical_rows - og_fragment_live_rows(&m.fragments[start + k]);
            }
        }
        i = nf; /* nothing else */
    }
    while (st == OG_OK && i < nf) {
        /* the longest run of candidates starting at i whose live rows fit the target */
        size_t n = 0;
        uint64_t live = 0;
        int any_del = 0;
        while (i + n < nf) {
            const og_fragment *f = &m.fragments[i + n];
            if (f->physical_rows >= c->target && !f->deletion.present) break;
            uint64_t l = og_fragment_live_rows(f);
            if (n && live + l > c->target) break;
            live += l;
            any_del |= f->deletion.present;
            group[n++] = f->id;
        }
        if (n == 0) {
            i++;
            continue;
        }
        if (n >= 2 || any_del) {
            if (!x) st = og_table_txn_begin(&x, tab, ref->version, NULL);
            uint64_t nid;
            if (st == OG_OK) st = og_table_txn_compact(x, group, n, &nid);
            if (st == OG_OK) {
                groups++;
                rows += live;
                for (size_t k = 0; k < n; k++) dropped += m.fragments[i + k].physical_rows - og_fragment_live_rows(&m.fragments[i + k]);
            }
        }
        i += n;
    }
    if (st == OG_OK && x) {
        size_t after = og_table_txn_manifest(x)->nfragments;
        uint64_t version;
        st = og_table_txn_commit(x, &version);
        if (st == OG_OK) st = og_draft_set_table(d, ref->dir, version, ref->rows);
        if (st == OG_OK) {
            c->rep.tables++;
            c->rep.fragments_before += nf;
            c->rep.fragments_after += after;
            c->rep.groups += groups;
            c->rep.rows_rewritten += rows;
            c->rep.deleted_rows_dropped += dropped;
        }
    }
    og_table_txn_free(x);
    free(group);
    og_manifest_free(&m);
    og_table_close(tab);
    return st ? og_err_wrap(st, "optimizing table %s", ref->dir) : OG_OK;
}

static og_status optimize_attempt(void *vctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)g;
    opt_ctx *c = vctx;
    memset(&c->rep, 0, sizeof c->rep); /* a re-run after a lost publish starts over */
    const og_commit *cm = og_snapshot_commit(base);
    og_read *r = NULL;
    og_status st = c->target_given ? OG_OK : og_read_begin_at(&r, c->e, base);
    c->cat = r ? og_read_catalog(r) : NULL;
    for (size_t i = 0; st == OG_OK && i < cm->ntables; i++) st = optimize_table(c, &cm->tables[i], d);
    c->cat = NULL;
    if (r) og_read_end(r);
    if (st != OG_OK) return st;
    if (!c->rep.tables) {
        og_draft_set_noop(d);
        return OG_OK;
    }
    st = og_draft_set_operation(d, OG_OP_OPTIMIZE, NULL);
    if (st == OG_OK) st = og_draft_set_stat(d, "tables", (int64_t)c->rep.tables);
    if (st == OG_OK) st = og_draft_set_stat(d, "fragments_before", (int64_t)c->rep.fragments_before);
    if (st == OG_OK) st = og_draft_set_stat(d, "fragments_after", (int64_t)c->rep.fragments_after);
    if (st == OG_OK) st = og_draft_set_stat(d, "rows_rewritten", (int64_t)c->rep.rows_rewritten);
    if (st == OG_OK && c->hook) c->hook(attempt, c->hook_arg);
    return st;
}

og_status og_engine_optimize(og_engine *e, const og_optimize_opts *opts, og_optimize_report *out)
{
    og_optimize_report local;
    if (!out) out = &local;
    memset(out, 0, sizeof *out);
    opt_ctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.target = opts && opts->target_rows ? opts->target_rows : OG_OPTIMIZE_TARGET_ROWS;
    c.target_given = opts && opts->target_rows;
    c.tiered = opts ? opts->tiered : 0;
    c.hook = opts ? opts->attempt_hook : NULL;
    c.hook_arg = opts ? opts->attempt_hook_arg : NULL;
    og_write_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.branch = opts && opts->branch ? opts->branch : "main";
    wo.actor = og_engine_actor(e);
    wo.actor_via = og_engine_actor_via(e);
    wo.message = og_engine_message();
    wo.expected_head = opts ? opts->expected_head : NULL;
    og_write_result w;
    memset(&w, 0, sizeof w);
    og_status st = og_graph_write(og_engine_graph(e), &wo, optimize_attempt, &c, &w);
    if (st != OG_OK) return st;
    *out = c.rep;
    out->published = w.published;
    out->attempts = w.attempts;
    if (w.published) memcpy(out->commit, w.commit, sizeof out->commit);
    return OG_OK;
}

size_t og_engine_auto_optimize_threshold(void)
{
    const char *v = getenv("OG_AUTO_OPTIMIZE_FRAGMENTS");
    if (!v || !*v) return OG_AUTO_OPTIMIZE_FRAGMENTS;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    return *end ? OG_AUTO_OPTIMIZE_FRAGMENTS : (size_t)n;
}

og_status og_engine_auto_optimize(og_engine *e, const char *branch, const char *commit, og_optimize_report *out)
{
    memset(out, 0, sizeof *out);
    size_t limit = og_engine_auto_optimize_threshold();
    if (!limit) return OG_OK;
    og_snapshot *snap;
    OG_TRY(commit && *commit ? og_graph_snapshot_commit(og_engine_graph(e), commit, &snap)
                             : og_graph_snapshot_branch(og_engine_graph(e), branch ? branch : "main", &snap));
    const og_commit *cm = og_snapshot_commit(snap);
    int over = 0;
    og_status st = OG_OK;
    for (size_t i = 0; st == OG_OK && !over && i < cm->ntables; i++) {
        og_table *tab;
        st = og_table_open(&tab, og_engine_store(e), cm->tables[i].dir);
        if (st != OG_OK) break;
        og_table_set_cache(tab, og_graph_cache(og_engine_graph(e))); /* manifests are cached */
        og_manifest m;
        og_manifest_init(&m);
        st = og_table_load(tab, cm->tables[i].version, &m);
        size_t small = 0;
        for (size_t k = 0; st == OG_OK && k < m.nfragments; k++) small += m.fragments[k].physical_rows < OG_AUTO_OPTIMIZE_SMALL_ROWS;
        over = small > limit;
        og_manifest_free(&m);
        og_table_close(tab);
    }
    og_snapshot_free(snap);
    if (st != OG_OK || !over) return st;
    /* the newest run of small ones only: a bulk load's full fragments are left as they are */
    og_optimize_opts o = {branch, OG_AUTO_OPTIMIZE_SMALL_ROWS, NULL, limit, NULL, NULL};
    return og_engine_optimize(e, &o, out);
}
