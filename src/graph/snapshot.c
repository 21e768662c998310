/*
 * snapshot.c — one immutable view for a whole read (STORAGE.md §6): branch head entry →
 * commit → schema bytes + table versions.  A snapshot holds cache entries for its commit and
 * schema, so it stays valid however the branch moves, whatever the cache evicts and even
 * after the graph handle is closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "util/error.h"

og_status og_snapshot_make(og_graph *g, const og_ref_entry *head, const char *commit_id, og_snapshot **out)
{
    *out = NULL;
    og_snapshot *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory making a snapshot");
    if (head) {
        s->head = *head;
        s->has_head = 1;
    }
    og_status st = og_graph_commit_get(g, commit_id, &s->commit, &s->commit_hold);
    if (st == OG_OK) {
        st = og_graph_schema_get(g, s->commit->schema, &s->schema, &s->schema_hold);
        if (st != OG_OK) og_err_wrap(st, "commit %s", commit_id);
    }
    if (st != OG_OK) {
        og_snapshot_free(s);
        return st;
    }
    *out = s;
    return OG_OK;
}

og_status og_graph_snapshot_branch(og_graph *g, const char *branch, og_snapshot **out)
{
    *out = NULL;
    og_ref_entry head;
    OG_TRY(og_graph_head_entry(g, branch, &head));
    if (head.kind == OG_REF_DELETE)
        return og_err(OG_ERR_NOT_FOUND, "branch \"%s\" not found (it was deleted at log entry %llu)", branch,
                      (unsigned long long)head.seq);
    og_status st = og_snapshot_make(g, &head, head.commit, out);
    if (st != OG_OK) return og_err_wrap(st, "branch \"%s\"", branch);
    return OG_OK;
}

og_status og_graph_snapshot_commit(og_graph *g, const char *commit_id, og_snapshot **out)
{
    return og_snapshot_make(g, NULL, commit_id, out);
}

void og_snapshot_free(og_snapshot *s)
{
    if (!s) return;
    og_cache_entry_release(s->commit_hold);
    og_cache_entry_release(s->schema_hold);
    free(s);
}

const og_commit *og_snapshot_commit(const og_snapshot *s) { return s->commit; }
const char *og_snapshot_commit_id(const og_snapshot *s) { return s->commit->id; }
const char *og_snapshot_schema_id(const og_snapshot *s) { return s->commit->schema; }
const og_bytes *og_snapshot_schema(const og_snapshot *s) { return s->schema; }
const og_table_ref *og_snapshot_table(const og_snapshot *s, const char *dir) { return og_commit_table(s->commit, dir); }
const og_ref_entry *og_snapshot_head(const og_snapshot *s) { return s->has_head ? &s->head : NULL; }
