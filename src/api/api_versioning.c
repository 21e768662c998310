/*
 * api_versioning.c — the public versioning API (include/omnigraph.h "Versioning"): branches,
 * commit history, row-level changes and merge, over the graph authority and the engine's
 * history / changes / merge modules.  This file only converts engine results to the JSON
 * shapes documented in docs/c-api.md; every decision is the engine's.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/catalog.h"
#include "engine/changes.h"
#include "api/db.h"
#include "engine/engine.h"
#include "engine/export.h"
#include "engine/history.h"
#include "engine/jsonval.h"
#include "engine/merge.h"
#include "graph/origin.h"
#include "util/datetime.h"
#include "util/error.h"
#include "util/jsonout.h"

static og_status dump(json_t *j, char **out)
{
    *out = j ? og_json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

/* ---- branches ------------------------------------------------------------------------------- */

og_status og_db_branch_create(og_db *db, const char *name, const char *from_branch, const char *from_commit,
                              char head_out[32])
{
    og_db_branch_create_opts o = {OG_DB_BRANCH_CREATE_OPTS_VERSION, from_branch, from_commit, NULL};
    return og_db_branch_create_ex(head_out, db, name, &o);
}

og_status og_db_branch_create_ex(char head_out[32], og_db *db, const char *name, const og_db_branch_create_opts *opts)
{
    if (head_out) head_out[0] = '\0';
    if (opts && (opts->version < 1 || opts->version > OG_DB_BRANCH_CREATE_OPTS_VERSION))
        return og_err(OG_ERR_INVALID, "branch create: options version %u is not one this library knows (1)", opts->version);
    const char *from_branch = opts ? opts->from_branch : NULL, *from_commit = opts ? opts->from_commit : NULL;
    const char *message = opts && opts->message && *opts->message ? opts->message : NULL;
    if (!db || !name) return og_err(OG_ERR_INVALID, "branch create: a name is required");
    if (from_branch && from_commit) return og_err(OG_ERR_INVALID, "branch create: give --from or --at, not both");
    if (!strcmp(name, "main")) return og_err(OG_ERR_INVALID, "branch create: 'main' always exists");
    if (!from_branch && !from_commit) from_branch = "main";
    og_ref_entry e;
    char cbuf[27];
    OG_TRY(og_api_resolve_opt(db, from_commit, cbuf, &from_commit));
    OG_TRY(og_branch_create_msg(og_engine_graph(db->e), name, from_branch, from_commit, og_engine_actor(db->e), message,
                                &e));
    if (head_out) snprintf(head_out, 32, "%s", e.commit);
    return OG_OK;
}

og_status og_db_branch_delete(og_db *db, const char *name) { return og_db_branch_delete_if(db, name, NULL); }

og_status og_db_branch_delete_if(og_db *db, const char *name, const char *expected_head)
{
    if (!db || !name) return og_err(OG_ERR_INVALID, "branch delete: a name is required");
    return og_branch_delete_if(og_engine_graph(db->e), name, og_engine_actor(db->e), expected_head);
}

og_status og_db_branch_list(char **out, og_db *db)
{
    *out = NULL;
    og_branch_list l;
    OG_TRY(og_branch_list_all(og_engine_graph(db->e), &l));
    json_t *o = json_object(), *a = json_array();
    for (size_t i = 0; i < l.count; i++) {
        json_t *b = json_object();
        json_object_set_new(b, "name", json_string(l.items[i].branch));
        json_object_set_new(b, "head", json_string(l.items[i].commit));
        json_object_set_new(b, "incarnation", json_string(l.items[i].incarnation));
        json_object_set_new(b, "seq", json_integer((json_int_t)l.items[i].seq));
        /* where it came from (issue 38: agents tell their branches from others'): creator,
         * base commit and creation time, from the incarnation's create entry */
        og_ref_entry c;
        if (og_branch_origin(og_engine_graph(db->e), &l.items[i], &c) == OG_OK) {
            json_object_set_new(b, "created_by", json_string(c.actor));
            json_object_set_new(b, "created_at", json_string(c.at));
            json_object_set_new(b, "base", c.commit[0] ? json_string(c.commit) : json_null());
            json_object_set_new(b, "message", c.message[0] ? json_string(c.message) : json_null());
        } else {
            og_error_clear(); /* a log cleaned up below its create entry: the origin is unknown */
            json_object_set_new(b, "created_by", json_null());
            json_object_set_new(b, "created_at", json_null());
            json_object_set_new(b, "base", json_null());
            json_object_set_new(b, "message", json_null());
        }
        json_array_append_new(a, b);
    }
    json_object_set_new(o, "branches", a);
    og_branch_list_free(&l);
    return dump(o, out);
}

og_status og_db_branch_creator(og_db *db, const char *name, char *out, size_t cap)
{
    if (out && cap) out[0] = '\0';
    if (!db || !name || !out || !cap) return og_err(OG_ERR_INVALID, "branch creator: a branch name is required");
    og_ref_entry head, c;
    og_status st = og_graph_head_entry(og_engine_graph(db->e), name, &head);
    if (st != OG_OK) return st;
    if (head.kind == OG_REF_DELETE) return og_err(OG_ERR_NOT_FOUND, "branch '%s' not found", name);
    st = og_branch_origin(og_engine_graph(db->e), &head, &c);
    if (st == OG_ERR_NOT_FOUND) { /* cleaned up below its create entry: unknown, not an error */
        og_error_clear();
        return OG_OK;
    }
    if (st != OG_OK) return st;
    if (strlen(c.actor) >= cap) return og_err(OG_ERR_INVALID, "branch creator: buffer too small");
    memcpy(out, c.actor, strlen(c.actor) + 1);
    return OG_OK;
}

/* ---- commits -------------------------------------------------------------------------------- */

static json_t *commit_json(const og_commit *c)
{
    json_t *o = json_object(), *parents = json_array(), *stats = json_object();
    json_object_set_new(o, "id", json_string(c->id));
    for (size_t i = 0; i < c->nparents; i++) json_array_append_new(parents, json_string(c->parents[i]));
    json_object_set_new(o, "parents", parents);
    json_object_set_new(o, "schema", json_string(c->schema));
    const char *kind = og_op_kind_name(c->kind);
    json_object_set_new(o, "kind", kind ? json_string(kind) : json_null());
    json_object_set_new(o, "mode", c->mode ? json_string(c->mode) : json_null());
    for (size_t i = 0; i < c->nstats; i++) json_object_set_new(stats, c->stats[i].name, json_integer(c->stats[i].value));
    json_object_set_new(o, "stats", stats);
    json_object_set_new(o, "actor", json_string(c->actor ? c->actor : ""));
    /* how the actor was established (token, local, cluster, unauthenticated); null: not recorded */
    json_object_set_new(o, "actor_via", c->actor_via[0] ? json_string(c->actor_via) : json_null());
    json_object_set_new(o, "message", c->message ? json_string(c->message) : json_null());
    json_object_set_new(o, "created_at", json_string(c->created_at));
    return o;
}

og_status og_db_commit_list(char **out, og_db *db, const char *branch, size_t limit)
{
    *out = NULL;
    og_graph *g = og_engine_graph(db->e);
    if (!branch) branch = "main";
    og_ref_entry head;
    OG_TRY(og_graph_head_entry(g, branch, &head));
    if (head.kind == OG_REF_DELETE) return og_err(OG_ERR_NOT_FOUND, "branch '%s' was deleted", branch);
    og_commit_id *ids;
    size_t n;
    OG_TRY(og_history_first_parent(g, head.commit, limit, &ids, &n));
    size_t depth = n; /* the head's; the walk reached the root unless the limit cut it */
    og_status dst = limit && n == limit ? og_api_commit_depth(db, head.commit, &depth) : OG_OK;
    if (dst) {
        free(ids);
        return dst;
    }
    json_t *o = json_object(), *a = json_array();
    json_object_set_new(o, "branch", json_string(branch));
    json_object_set_new(o, "head", json_string(head.commit));
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        const og_commit *c;
        og_cache_entry *hold;
        st = og_graph_commit_get(g, ids[i].id, &c, &hold);
        if (st) break;
        json_t *cj = commit_json(c);
        json_object_set_new(cj, "depth", json_integer((json_int_t)(depth - i)));
        json_array_append_new(a, cj);
        og_cache_entry_release(hold);
    }
    json_object_set_new(o, "commits", a);
    free(ids);
    if (st) {
        json_decref(o);
        return st;
    }
    return dump(o, out);
}

og_status og_db_commit_show(char **out, og_db *db, const char *commit_id)
{
    *out = NULL;
    if (!commit_id) return og_err(OG_ERR_INVALID, "commit show: a commit id is required");
    og_read *r;
    char cbuf[27];
    OG_TRY(og_api_resolve_opt(db, commit_id, cbuf, &commit_id));
    OG_TRY(og_read_begin(&r, db->e, NULL, commit_id));
    const og_snapshot *s = og_read_snapshot(r);
    json_t *o = commit_json(og_snapshot_commit(s));
    size_t depth = 0;
    og_status st = og_api_commit_depth(db, commit_id, &depth);
    json_object_set_new(o, "depth", json_integer((json_int_t)depth));
    json_object_set_new(o, "tables", og_api_tables_json(r));
    og_read_end(r);
    if (st) {
        json_decref(o);
        return st;
    }
    return dump(o, out);
}

/* ---- changes -------------------------------------------------------------------------------- */


/* One row image, values spelled as result columns are: integers bare at any width, a U64
 * above 2^63-1 included (an og_json_bignum, printed by og_json_dumps).  Whoever re-reads the
 * change text (the feed, the CLI, the server, MCP) parses it with og_json_read, which keeps
 * that number whole. */
static json_t *image_json(const og_table_delta *d, const og_row_set *rs, uint32_t row)
{
    const unsigned flags = OG_CELL_BLOB_BASE64 | OG_CELL_BIG_U64;
    json_t *o = json_object();
    json_object_set_new(o, "id", og_jsonval_cell(&rs->cols[0], row, flags));
    size_t base = 1;
    if (d->is_edge) {
        json_object_set_new(o, "from", og_jsonval_cell(&rs->cols[1], row, flags));
        json_object_set_new(o, "to", og_jsonval_cell(&rs->cols[2], row, flags));
        base = 3;
    }
    for (size_t p = 0; p < d->t->nprops; p++)
        json_object_set_new(o, d->t->props[p].name, og_jsonval_cell(&rs->cols[base + p], row, flags));
    return o;
}

static json_t *changeset_json(const og_changeset *cs)
{
    json_t *o = json_object(), *stats = json_object(), *a = json_array();
    json_object_set_new(o, "from", json_string(cs->from));
    json_object_set_new(o, "to", json_string(cs->to));
    json_object_set_new(stats, "inserted", json_integer((json_int_t)cs->inserted));
    json_object_set_new(stats, "updated", json_integer((json_int_t)cs->updated));
    json_object_set_new(stats, "deleted", json_integer((json_int_t)cs->deleted));
    json_object_set_new(stats, "fragments_read", json_integer((json_int_t)cs->fragments_read));
    json_object_set_new(stats, "fragments_skipped", json_integer((json_int_t)cs->fragments_skipped));
    json_object_set_new(stats, "rows_read", json_integer((json_int_t)cs->rows_read));
    json_object_set_new(o, "stats", stats);
    for (size_t t = 0; t < cs->ntables; t++) {
        const og_table_delta *d = &cs->tables[t];
        for (size_t i = 0; i < d->nchanges; i++) {
            const og_change *ch = &d->changes[i];
            json_t *c = json_object();
            json_object_set_new(c, "kind", json_string(d->is_edge ? "edge" : "node"));
            json_object_set_new(c, "type", json_string(d->t->name));
            json_object_set_new(c, "id", json_stringn((const char *)ch->id, ch->idlen));
            json_object_set_new(c, "op", json_string(og_change_op_name(ch->op)));
            if (ch->before != OG_CHANGE_NO_ROW) json_object_set_new(c, "before", image_json(d, &d->before, ch->before));
            if (ch->after != OG_CHANGE_NO_ROW) json_object_set_new(c, "after", image_json(d, &d->after, ch->after));
            json_array_append_new(a, c);
        }
    }
    json_object_set_new(o, "changes", a);
    return o;
}

static og_change_filter to_filter(const og_changes_opts *o)
{
    og_change_filter f = {NULL, 0, 0};
    if (o) {
        f.types = o->types;
        f.ntypes = o->ntypes;
        f.ops = o->ops;
    }
    return f;
}

og_status og_db_changes(char **out, og_db *db, const og_changes_opts *o)
{
    *out = NULL;
    if (!o || !o->from || !o->to) return og_err(OG_ERR_INVALID, "changes: --from and --to commits are required");
    og_change_filter f = to_filter(o);
    og_changeset cs;
    char fbuf[27], tbuf[27];
    const char *from, *to;
    OG_TRY(og_api_resolve_opt(db, o->from, fbuf, &from));
    OG_TRY(og_api_resolve_opt(db, o->to, tbuf, &to));
    OG_TRY(og_changes_between(db->e, from, to, &f, &cs));
    json_t *j = changeset_json(&cs);
    og_changeset_free(&cs);
    return dump(j, out);
}

og_status og_db_commit_changes(char **out, og_db *db, const char *commit_id, const og_changes_opts *filter)
{
    *out = NULL;
    og_change_filter f = to_filter(filter);
    og_changeset cs;
    char cbuf[27];
    if (!commit_id) return og_err(OG_ERR_INVALID, "commit changes: a commit id is required");
    OG_TRY(og_api_resolve_opt(db, commit_id, cbuf, &commit_id));
    OG_TRY(og_changes_commit(db->e, commit_id, &f, &cs));
    json_t *j = changeset_json(&cs);
    const og_commit *c = og_snapshot_commit(og_read_snapshot(cs.read));
    json_t *cause = json_object();
    json_object_set_new(cause, "commit", json_string(c->id));
    json_object_set_new(cause, "parent", json_string(c->parents[0]));
    json_object_set_new(cause, "merged_parent", c->nparents > 1 ? json_string(c->parents[1]) : json_null());
    const char *kind = og_op_kind_name(c->kind);
    json_object_set_new(cause, "kind", kind ? json_string(kind) : json_null());
    json_object_set_new(cause, "actor", json_string(c->actor ? c->actor : ""));
    json_object_set_new(cause, "created_at", json_string(c->created_at));
    json_object_set_new(j, "cause", cause);
    og_changeset_free(&cs);
    return dump(j, out);
}

/* ---- merge ---------------------------------------------------------------------------------- */

static json_t *conflict_json(const og_merge_conflict *k)
{
    json_t *c = json_object();
    json_object_set_new(c, "kind", json_string(og_conflict_kind_name(k->kind)));
    json_object_set_new(c, "type", json_string(k->type));
    json_object_set_new(c, "id", k->id ? json_string(k->id) : json_null());
    json_object_set_new(c, "message", json_string(k->message));
    /* the reference's spellings (MergeConflictOutput) */
    json_object_set_new(c, "entity_kind", json_string(k->is_edge ? "edge" : "node"));
    json_object_set_new(c, "type_name", json_string(k->type));
    json_object_set_new(c, "entity_id", k->id ? json_string(k->id) : json_null());
    if (k->properties) json_object_set(c, "properties", k->properties);
    if (k->resolution) json_object_set_new(c, "resolution", json_string(og_merge_side_name(k->resolution)));
    return c;
}

static og_merge_side side_of(og_merge_strategy s, og_merge_strategy dflt)
{
    if (s == OG_MERGE_STRATEGY_FAIL) s = dflt;
    return s == OG_MERGE_STRATEGY_OURS ? OG_MERGE_SIDE_OURS : s == OG_MERGE_STRATEGY_THEIRS ? OG_MERGE_SIDE_THEIRS
                                                                                            : OG_MERGE_SIDE_FAIL;
}

og_status og_db_branch_merge(char **out, og_db *db, const og_db_merge_opts *o)
{
    return og_db_branch_merge_ex(out, db, o, NULL);
}

static og_status merge(char **out, og_db *db, const og_db_merge_opts *o, const og_db_merge_strategy *strategy, int dry);

og_status og_db_branch_merge_ex(char **out, og_db *db, const og_db_merge_opts *o, const og_db_merge_strategy *strategy)
{
    return merge(out, db, o, strategy, 0);
}

og_status og_db_branch_merge_dry_run(char **out, og_db *db, const og_db_merge_opts *o,
                                     const og_db_merge_strategy *strategy)
{
    return merge(out, db, o, strategy, 1);
}

static og_status merge(char **out, og_db *db, const og_db_merge_opts *o, const og_db_merge_strategy *strategy, int dry)
{
    if (out) *out = NULL;
    if (!o || !o->source) return og_err(OG_ERR_INVALID, "branch merge: a source branch is required");
    og_db_merge_strategy none = {OG_MERGE_STRATEGY_FAIL, OG_MERGE_STRATEGY_FAIL, OG_MERGE_STRATEGY_FAIL,
                                 OG_MERGE_STRATEGY_FAIL};
    const og_db_merge_strategy *sg = strategy ? strategy : &none;
    const og_merge_strategy all[] = {sg->all, sg->divergent_insert, sg->divergent_update, sg->delete_vs_update};
    for (size_t i = 0; i < 4; i++)
        if ((unsigned)all[i] > OG_MERGE_STRATEGY_THEIRS)
            return og_err(OG_ERR_INVALID, "branch merge: unknown merge strategy %d", (int)all[i]);
    const char *target = o->target ? o->target : "main";
    og_merge_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.source = o->source;
    mo.target = target;
    mo.expected_head = o->expected_head;
    og_merge_resolve rs;
    memset(&rs, 0, sizeof rs);
    rs.side[OG_CONFLICT_DIVERGENT_INSERT] = side_of(sg->divergent_insert, sg->all);
    rs.side[OG_CONFLICT_DIVERGENT_UPDATE] = side_of(sg->divergent_update, sg->all);
    rs.side[OG_CONFLICT_DELETE_VS_UPDATE] = side_of(sg->delete_vs_update, sg->all);
    rs.dry_run = dry;
    og_merge_result r;
    og_status st = og_engine_merge_resolve(db->e, &mo, &rs, &r);
    if (st == OG_ERR_CONFLICT && r.nconflicts) {
        /* keep the engine's message: it lists every conflict */
        if (out) {
            json_t *j = json_object(), *a = json_array();
            for (size_t i = 0; i < r.nconflicts; i++) json_array_append_new(a, conflict_json(&r.conflicts[i]));
            json_object_set_new(j, "conflicts", a);
            *out = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            json_decref(j);
        }
        og_merge_result_free(&r);
        return OG_ERR_CONFLICT;
    }
    if (st) {
        og_merge_result_free(&r);
        return st;
    }
    int deleted = 0;
    if (o->delete_branch && !dry) {
        st = og_branch_delete(og_engine_graph(db->e), o->source, og_engine_actor(db->e));
        if (st) {
            og_merge_result_free(&r);
            return og_err_wrap(st, "merged, but deleting branch '%s' failed", o->source);
        }
        deleted = 1;
    }
    json_t *j = json_object();
    json_object_set_new(j, "outcome", json_string(og_merge_outcome_name(r.outcome)));
    json_object_set_new(j, "source", json_string(o->source));
    json_object_set_new(j, "target", json_string(target));
    const char *actor = og_engine_actor(db->e);
    json_object_set_new(j, "actor_id", actor && *actor ? json_string(actor) : json_null());
    json_object_set_new(j, "base", json_string(r.base));
    json_object_set_new(j, "source_head", json_string(r.source_head));
    json_object_set_new(j, "previous_head", json_string(r.target_head));
    if (r.write.published) {
        json_t *c = json_object();
        json_object_set_new(c, "graph_commit_id", json_string(r.write.commit));
        json_object_set_new(c, "graph_branch", json_string(target));
        json_object_set_new(c, "attempts", json_integer(r.write.attempts));
        json_object_set_new(j, "commit", c);
    } else {
        json_object_set_new(j, "commit", json_null());
    }
    json_object_set_new(j, "inserted", json_integer((json_int_t)r.inserted));
    json_object_set_new(j, "updated", json_integer((json_int_t)r.updated));
    json_object_set_new(j, "deleted", json_integer((json_int_t)r.deleted));
    json_object_set_new(j, "branch_deleted", json_boolean(deleted));
    if (dry) json_object_set_new(j, "dry_run", json_true());
    json_t *resolved = json_array();
    for (size_t i = 0; i < r.nresolved; i++) json_array_append_new(resolved, conflict_json(&r.resolved[i]));
    json_object_set_new(j, "resolved", resolved);
    json_t *cost = json_object();
    json_object_set_new(cost, "fragments_read", json_integer((json_int_t)r.fragments_read));
    json_object_set_new(cost, "fragments_skipped", json_integer((json_int_t)r.fragments_skipped));
    json_object_set_new(cost, "rows_read", json_integer((json_int_t)r.rows_read));
    json_object_set_new(j, "stats", cost);
    og_merge_result_free(&r);
    if (!out) {
        json_decref(j);
        return OG_OK;
    }
    return dump(j, out);
}
