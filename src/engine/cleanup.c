/*
 * cleanup.c — reclaiming what no retained commit reaches (cleanup.h, docs/maintenance.md).
 *
 * Why this order (the crash argument, INVARIANTS.md 5): everything a retained commit needs is
 * decided first and never touched; then the unreachable objects go top-down — branch log
 * entries, commit objects, table manifests, data and deletion files, derived index files.
 * A crash anywhere leaves every retained commit whole (readable at exactly its answers) plus
 * some garbage that the next run finds again by listing (nothing is remembered between runs,
 * so there is no to-do list to lose).  Top-down also serves readers holding an old snapshot:
 * they lose the manifest or the files of a reclaimed version and get a typed not_found;
 * names are never reused (ULIDs, UUIDs, manifest numbers below every writer's base), so no
 * reader can ever find other bytes under a name it knew.
 */
#include "engine/cleanup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/table.h"
#include "util/datetime.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/id.h"
#include "util/strmap.h"

/* ---- the retained set ------------------------------------------------------------------- */

typedef struct vkeep {
    char dir[256];
    uint64_t *v;
    size_t n, cap;
    og_table_sweep_stats sw;
    int swept;
} vkeep;

typedef struct ctx {
    og_engine *e;
    og_graph *g;
    og_cleanup_opts o;
    int64_t now, cutoff;
    og_strmap retained; /* commit id -> 1 */
    vkeep *tabs;
    size_t ntabs, tabcap;
    og_cleanup_report *r;
} ctx;

static vkeep *tab_get(ctx *c, const char *dir, int create)
{
    for (size_t i = 0; i < c->ntabs; i++)
        if (!strcmp(c->tabs[i].dir, dir)) return &c->tabs[i];
    if (!create || strlen(dir) >= sizeof c->tabs[0].dir) return NULL;
    if (c->ntabs == c->tabcap) {
        size_t cap = c->tabcap ? c->tabcap * 2 : 16;
        vkeep *p = realloc(c->tabs, cap * sizeof *p);
        if (!p) return NULL;
        c->tabs = p;
        c->tabcap = cap;
    }
    vkeep *t = &c->tabs[c->ntabs++];
    memset(t, 0, sizeof *t);
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    return t;
}

static og_status keep_version(ctx *c, const char *dir, uint64_t v)
{
    vkeep *t = tab_get(c, dir, 1);
    if (!t) return og_err(OG_ERR_NOMEM, "out of memory");
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        uint64_t *p = realloc(t->v, cap * sizeof *p);
        if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
        t->v = p;
        t->cap = cap;
    }
    t->v[t->n++] = v;
    return OG_OK;
}

static int is_retained(ctx *c, const char *id) { return og_strmap_get(&c->retained, id, strlen(id), NULL); }

/* Marks commit c retained (once) and keeps the table versions it names. */
static og_status retain(ctx *c, const og_commit *cm, int *added)
{
    int inserted;
    OG_TRY(og_strmap_insert(&c->retained, cm->id, strlen(cm->id), 1, NULL, &inserted));
    *added = inserted;
    if (!inserted) return OG_OK;
    c->r->commits_retained++;
    for (size_t i = 0; i < cm->ntables; i++) OG_TRY(keep_version(c, cm->tables[i].dir, cm->tables[i].version));
    return OG_OK;
}

static int64_t commit_ms(const og_commit *cm)
{
    int64_t ms = 0;
    if (og_datetime_parse(cm->created_at, strlen(cm->created_at), &ms) != OG_OK) {
        og_error_clear();
        return og_ulid_time_ms(cm->id);
    }
    return ms;
}

/* Does the policy keep a commit at `dist` parent links from a live head? */
static int policy_keeps(ctx *c, const og_commit *cm, uint64_t dist)
{
    int any = c->o.keep_commits > 0 || c->o.older_than_ms >= 0;
    if (dist == 0 || !any) return 1;
    int64_t t = commit_ms(cm);
    if (t >= c->cutoff) return 1; /* grace period */
    if (c->o.keep_commits > 0 && dist < (uint64_t)c->o.keep_commits) return 1;
    if (c->o.older_than_ms >= 0 && t >= c->now - c->o.older_than_ms) return 1;
    return 0;
}

/* Breadth-first from one live head through every parent, keeping what the policy keeps. */
static og_status walk_from(ctx *c, const char *head)
{
    og_strmap seen;
    og_strmap_init(&seen);
    typedef struct qe { char id[OG_ULID_LEN + 1]; uint64_t dist; } qe;
    qe *q = NULL;
    size_t qn = 0, qcap = 0;
    og_status st = OG_OK;
#define QPUSH(ID, D)                                                                   \
    do {                                                                               \
        int ins_;                                                                      \
        st = og_strmap_insert(&seen, (ID), strlen(ID), 1, NULL, &ins_);                \
        if (st == OG_OK && ins_) {                                                     \
            if (qn == qcap) {                                                          \
                size_t nc_ = qcap ? qcap * 2 : 64;                                     \
                qe *p_ = realloc(q, nc_ * sizeof *p_);                                 \
                if (!p_) st = og_err(OG_ERR_NOMEM, "out of memory");                   \
                else q = p_, qcap = nc_;                                               \
            }                                                                          \
            if (st == OG_OK) {                                                         \
                snprintf(q[qn].id, sizeof q[qn].id, "%s", (ID));                       \
                q[qn++].dist = (D);                                                    \
            }                                                                          \
        }                                                                              \
    } while (0)
    QPUSH(head, 0);
    for (size_t i = 0; i < qn && st == OG_OK; i++) {
        const og_commit *cm;
        og_cache_entry *hold;
        st = og_graph_commit_get(c->g, q[i].id, &cm, &hold);
        if (st == OG_ERR_NOT_FOUND && i > 0) { /* reclaimed by an earlier cleanup: history ends */
            og_error_clear();
            st = OG_OK;
            continue;
        }
        if (st != OG_OK) break;
        if (policy_keeps(c, cm, q[i].dist)) {
            int added;
            st = retain(c, cm, &added);
            /* Without a distance rule, a commit another head's walk kept has its ancestors
             * decided already: do not walk the shared history once per branch. */
            int expand = added || c->o.keep_commits > 0 || i == 0;
            for (size_t p = 0; expand && p < cm->nparents && st == OG_OK; p++) QPUSH(cm->parents[p], q[i].dist + 1);
        }
        og_cache_entry_release(hold);
    }
#undef QPUSH
    free(q);
    og_strmap_free(&seen);
    return st;
}

/* A commit that must stay whatever the policy says (young, or named by a young entry). */
static og_status retain_id(ctx *c, const char *id)
{
    if (is_retained(c, id)) return OG_OK;
    const og_commit *cm;
    og_cache_entry *hold;
    og_status st = og_graph_commit_get(c->g, id, &cm, &hold);
    if (st == OG_ERR_NOT_FOUND) { /* a commit object not written yet, or gone: nothing to keep */
        og_error_clear();
        return OG_OK;
    }
    if (st == OG_ERR_CORRUPT && og_ulid_time_ms(id) >= c->cutoff) { /* being written? leave it */
        og_error_clear();
        return OG_OK;
    }
    OG_TRY(st);
    int added;
    st = retain(c, cm, &added);
    og_cache_entry_release(hold);
    return st;
}

static int64_t entry_ms(const og_ref_entry *e)
{
    int64_t ms = 0;
    if (og_datetime_parse(e->at, strlen(e->at), &ms) != OG_OK) {
        og_error_clear();
        return INT64_MAX; /* unknown age: treat as young */
    }
    return ms;
}

/* ---- phases ----------------------------------------------------------------------------- */

/* Log entries: per name, the longest prefix (ascending seq) of entries that are not the
 * newest, older than the grace period and (on a live branch) name no retained commit; of a
 * deleted branch only the delete entry stays, so the name's seq goes on from there
 * (docs/graph-authority.md §4 needs ascending order and the newest kept). */
static og_status sweep_logs(ctx *c, og_graph_log *logs, size_t nlogs)
{
    int dry = !c->o.confirm;
    for (size_t i = 0; i < nlogs; i++) {
        og_graph_log *l = &logs[i];
        int ended = l->n && l->entries[l->n - 1].kind == OG_REF_DELETE; /* a deleted branch */
        for (size_t k = 0; k + 1 < l->n; k++) {
            const og_ref_entry *e = &l->entries[k];
            if (entry_ms(e) >= c->cutoff) break;
            if (!ended && e->kind != OG_REF_DELETE && is_retained(c, e->commit)) break;
            int deleted;
            OG_TRY(og_graph_gc_delete_entry(c->g, l->branch, e->seq, dry, &c->r->log_entries_bytes, &deleted));
            c->r->log_entries_removed += (uint64_t)deleted;
        }
    }
    return OG_OK;
}

/* Right before commits go: a branch created meanwhile at a commit we planned to remove. */
static og_status recheck_heads(ctx *c)
{
    og_branch_list bl;
    OG_TRY(og_branch_list_all(c->g, &bl));
    og_status st = OG_OK;
    for (size_t i = 0; i < bl.count && st == OG_OK; i++)
        if (!is_retained(c, bl.items[i].commit) && og_ulid_time_ms(bl.items[i].commit) < c->cutoff)
            st = og_err(OG_ERR_CONFLICT,
                        "cleanup: branch \"%s\" now points at commit %s, which this run was about to remove; "
                        "nothing was removed from the commit phase on; run cleanup again",
                        bl.items[i].branch, bl.items[i].commit);
    og_branch_list_free(&bl);
    return st;
}

static og_status sweep_commits(ctx *c, const og_commit_id_list *ids)
{
    int dry = !c->o.confirm;
    for (size_t i = 0; i < ids->n; i++) {
        const char *id = ids->ids[i];
        if (is_retained(c, id)) continue;
        if (og_ulid_time_ms(id) >= c->cutoff) {
            c->r->young_kept++;
            continue;
        }
        int deleted;
        OG_TRY(og_graph_gc_delete_commit(c->g, id, dry, &c->r->commits_bytes, &deleted));
        c->r->commits_removed += (uint64_t)deleted;
    }
    return OG_OK;
}

/* Every table directory in the store (first segment under tables/). */
static og_status list_table_dirs(ctx *c)
{
    og_keylist kl = {0};
    OG_TRY(og_store_list(og_engine_store(c->e), "tables/", NULL, 0, &kl));
    og_status st = OG_OK;
    for (size_t i = 0; i < kl.count && st == OG_OK; i++) {
        const char *rest = kl.keys[i] + 7;
        const char *slash = strchr(rest, '/');
        if (!slash || (size_t)(slash - rest) >= 256) continue;
        char dir[256];
        memcpy(dir, rest, (size_t)(slash - rest));
        dir[slash - rest] = '\0';
        if (!tab_get(c, dir, 1)) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    og_keylist_free(&kl);
    return st;
}

static og_status sweep_tables(ctx *c)
{
    for (size_t i = 0; i < c->ntabs; i++) {
        vkeep *t = &c->tabs[i];
        og_table *tab;
        OG_TRY(og_table_open(&tab, og_engine_store(c->e), t->dir));
        og_table_set_cache(tab, og_graph_cache(c->g));
        og_table_sweep_opts so = {t->v, t->n, c->cutoff, !c->o.confirm};
        og_status st = og_table_sweep(tab, &so, &t->sw);
        og_table_close(tab);
        if (st != OG_OK) return og_err_wrap(st, "cleanup of table %s", t->dir);
        t->swept = 1;
        c->r->tables++;
        c->r->versions_removed += t->sw.versions_removed;
        c->r->versions_bytes += t->sw.versions_bytes;
        c->r->versions_emptied += t->sw.versions_emptied;
        c->r->files_removed += t->sw.files_removed;
        c->r->files_bytes += t->sw.files_bytes;
        c->r->orphans_removed += t->sw.orphans_removed;
        c->r->orphans_bytes += t->sw.orphans_bytes;
        c->r->young_kept += t->sw.versions_young + t->sw.files_young;
    }
    return OG_OK;
}

static int live_version(ctx *c, const char *dir, uint64_t v)
{
    vkeep *t = tab_get(c, dir, 0);
    if (!t || !t->swept) return 0;
    for (size_t i = 0; i < t->sw.nlive_versions; i++)
        if (t->sw.live_versions[i] == v) return 1;
    return 0;
}

static int live_file(const vkeep *t, const char *stem, size_t len)
{
    for (size_t i = 0; i < t->sw.nlive_files; i++) {
        const char *f = t->sw.live_files[i];
        if (!strncmp(f, stem, len) && !strcmp(f + len, ".lance")) return 1;
    }
    return 0;
}

/* "<ev>-<src dir>-<sv>-<dst dir>-<dv>.csr": 1 when every part parses and names a live
 * version; -1 when the name is not one we know (then the file stays). */
static int topology_live(ctx *c, const char *edge_dir, const char *name)
{
    size_t n = strlen(name);
    if (n < 5 || strcmp(name + n - 4, ".csr")) return -1;
    char buf[1024];
    if (n - 4 >= sizeof buf) return -1;
    memcpy(buf, name, n - 4);
    buf[n - 4] = '\0';
    char *part[5];
    int np = 0;
    for (char *p = buf, *s; np < 5; p = s + 1) {
        part[np++] = p;
        s = strchr(p, '-');
        if (!s) break;
        *s = '\0';
    }
    if (np != 5) return -1;
    uint64_t v[3];
    int idx[3] = {0, 2, 4};
    for (int k = 0; k < 3; k++) {
        char *end;
        v[k] = strtoull(part[idx[k]], &end, 10);
        if (!*part[idx[k]] || *end) return -1;
    }
    return live_version(c, edge_dir, v[0]) && live_version(c, part[1], v[1]) && live_version(c, part[3], v[2]);
}

/* Derived files: _index/<table dir>/<data file stem>/... goes with its data file (whatever
 * kind of index it is), _index/<edge dir>/topology/<triple>.csr with its versions, and
 * everything of a table directory that no longer exists. */
static og_status sweep_index(ctx *c)
{
    og_store *s = og_engine_store(c->e);
    og_keylist kl = {0};
    OG_TRY(og_store_list(s, "_index/", NULL, 0, &kl));
    og_status st = OG_OK;
    int dry = !c->o.confirm;
    for (size_t i = 0; i < kl.count && st == OG_OK; i++) {
        const char *rest = kl.keys[i] + 7;
        const char *s1 = strchr(rest, '/');
        if (!s1 || (size_t)(s1 - rest) >= 256) continue;
        char dir[256];
        memcpy(dir, rest, (size_t)(s1 - rest));
        dir[s1 - rest] = '\0';
        const char *seg = s1 + 1;
        const char *s2 = strchr(seg, '/');
        if (!s2) continue; /* not a layout we know */
        vkeep *t = tab_get(c, dir, 0);
        int doomed;
        if (!t) {
            doomed = 1; /* its table is gone entirely */
        } else if (!t->swept) {
            doomed = 0;
        } else if ((size_t)(s2 - seg) == 8 && !strncmp(seg, "topology", 8)) {
            if (strchr(s2 + 1, '/')) continue;
            int live = topology_live(c, dir, s2 + 1);
            doomed = live == 0;
        } else {
            doomed = !live_file(t, seg, (size_t)(s2 - seg));
        }
        if (!doomed) continue;
        uint64_t size = 0;
        st = og_store_head(s, kl.keys[i], &size);
        if (st == OG_ERR_NOT_FOUND) {
            og_error_clear();
            st = OG_OK;
            continue;
        }
        if (st != OG_OK) break;
        if (!dry) {
            st = og_store_delete(s, kl.keys[i]);
            if (st == OG_ERR_NOT_FOUND) {
                og_error_clear();
                st = OG_OK;
                continue;
            }
            if (st != OG_OK) {
                st = og_err_wrap(st, "cleanup: deleting %s", kl.keys[i]);
                break;
            }
        }
        c->r->index_removed++;
        c->r->index_bytes += size;
    }
    og_keylist_free(&kl);
    return st;
}

og_status og_engine_cleanup(og_engine *e, const og_cleanup_opts *opts, og_cleanup_report *out)
{
    memset(out, 0, sizeof *out);
    ctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.g = og_engine_graph(e);
    c.o = *opts;
    c.r = out;
    out->dry_run = !opts->confirm;
    if (c.o.keep_commits < 0) return og_err(OG_ERR_INVALID, "cleanup: --keep-commits must be at least 1");
    int64_t grace = c.o.grace_ms < 0 ? OG_CLEANUP_GRACE_MS : c.o.grace_ms;
    c.now = c.o.now_ms ? c.o.now_ms : og_now_ms();
    c.cutoff = c.now - grace;
    og_strmap_init(&c.retained);
    og_graph_log *logs = NULL;
    size_t nlogs = 0;
    og_commit_id_list ids = {0};
    /* 1. Decide: inventory, then the retained set and the versions it names. */
    og_status st = og_graph_logs_all(c.g, &logs, &nlogs);
    if (st == OG_OK) st = og_graph_commit_ids_all(c.g, &ids);
    for (size_t i = 0; i < nlogs && st == OG_OK; i++) {
        og_graph_log *l = &logs[i];
        const og_ref_entry *head = &l->entries[l->n - 1];
        if (head->kind != OG_REF_DELETE) st = walk_from(&c, head->commit);
        for (size_t k = 0; k < l->n && st == OG_OK; k++) /* entries inside the grace period */
            if (l->entries[k].kind != OG_REF_DELETE && entry_ms(&l->entries[k]) >= c.cutoff)
                st = retain_id(&c, l->entries[k].commit);
    }
    for (size_t i = 0; i < ids.n && st == OG_OK; i++) /* commits inside the grace period */
        if (og_ulid_time_ms(ids.ids[i]) >= c.cutoff) st = retain_id(&c, ids.ids[i]);
    if (st == OG_OK) st = list_table_dirs(&c);
    /* 2. Remove, top-down. */
    if (st == OG_OK) st = sweep_logs(&c, logs, nlogs);
    if (st == OG_OK && opts->confirm) og_fault_point("cleanup.after_log_entries");
    if (st == OG_OK && opts->confirm) st = recheck_heads(&c);
    if (st == OG_OK) st = sweep_commits(&c, &ids);
    if (st == OG_OK && opts->confirm) og_fault_point("cleanup.after_commits");
    if (st == OG_OK) st = sweep_tables(&c);
    if (st == OG_OK && opts->confirm) og_fault_point("cleanup.after_files");
    if (st == OG_OK) st = sweep_index(&c);
    for (size_t i = 0; i < c.ntabs; i++) {
        free(c.tabs[i].v);
        if (c.tabs[i].swept) og_table_sweep_stats_free(&c.tabs[i].sw);
    }
    free(c.tabs);
    og_strmap_free(&c.retained);
    og_graph_logs_free(logs, nlogs);
    og_commit_id_list_free(&ids);
    return st;
}
