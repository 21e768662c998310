/*
 * merge.c — three-way merge of two branches.  See merge.h.
 *
 * Everything a merge decides is made inside the og_graph_write callback from that attempt's
 * captured target head, so a retry after a lost publish starts over (INVARIANTS.md 3).  The
 * source head is captured once, before the write, and is what the merge records as its second
 * parent.  Table deltas are computed by engine/changes.c, so only fragments that differ from
 * the merge base are read.
 */
#include "engine/merge.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/changes.h"
#include "engine/export.h"
#include "engine/history.h"
#include "engine/layout.h"
#include "engine/plan.h"
#include "engine/tableview.h"
#include "table/table.h"
#include "util/buf.h"
#include "util/error.h"

const char *og_merge_outcome_name(og_merge_outcome o)
{
    switch (o) {
    case OG_MERGE_ALREADY_UP_TO_DATE: return "already_up_to_date";
    case OG_MERGE_FAST_FORWARD: return "fast_forward";
    case OG_MERGE_MERGED: return "merged";
    }
    return "unknown";
}

const char *og_conflict_kind_name(og_conflict_kind k)
{
    switch (k) {
    case OG_CONFLICT_DIVERGENT_INSERT: return "divergent_insert";
    case OG_CONFLICT_DIVERGENT_UPDATE: return "divergent_update";
    case OG_CONFLICT_DELETE_VS_UPDATE: return "delete_vs_update";
    case OG_CONFLICT_ORPHAN_EDGE: return "orphan_edge";
    case OG_CONFLICT_UNIQUE_VIOLATION: return "unique_violation";
    case OG_CONFLICT_CARDINALITY_VIOLATION: return "cardinality_violation";
    case OG_CONFLICT_VALUE_CONSTRAINT_VIOLATION: return "value_constraint_violation";
    }
    return "unknown";
}

const char *og_merge_side_name(og_merge_side s)
{
    switch (s) {
    case OG_MERGE_SIDE_FAIL: return "fail";
    case OG_MERGE_SIDE_OURS: return "ours";
    case OG_MERGE_SIDE_THEIRS: return "theirs";
    }
    return "unknown";
}

static void conflict_list_clear(og_merge_conflict **list, size_t *n)
{
    for (size_t i = 0; i < *n; i++) {
        free((*list)[i].type);
        free((*list)[i].id);
        free((*list)[i].message);
        json_decref((*list)[i].properties);
    }
    free(*list);
    *list = NULL;
    *n = 0;
}

static void conflicts_clear(og_merge_result *r)
{
    conflict_list_clear(&r->conflicts, &r->nconflicts);
    conflict_list_clear(&r->resolved, &r->nresolved);
}

void og_merge_result_free(og_merge_result *r)
{
    if (r) conflicts_clear(r);
}

/* Appends a conflict to *list (takes `properties`). */
static og_status push_conflict(og_merge_conflict **list, size_t *n, og_conflict_kind kind, int is_edge, const char *type,
                               const void *id, size_t idlen, const char *message, json_t *properties)
{
    og_merge_conflict *c = realloc(*list, (*n + 1) * sizeof *c);
    if (!c) {
        json_decref(properties);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    *list = c;
    c = &c[*n];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->is_edge = is_edge;
    c->type = strdup(type ? type : "");
    c->id = id ? strndup(id, idlen) : NULL;
    c->message = strdup(message ? message : "");
    c->properties = properties;
    if (!c->type || (id && !c->id) || !c->message) {
        free(c->type), free(c->id), free(c->message);
        json_decref(properties);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    (*n)++;
    return OG_OK;
}

static og_status add_conflict(og_merge_result *r, og_conflict_kind kind, int is_edge, const char *type, const void *id,
                              size_t idlen, const char *message)
{
    return push_conflict(&r->conflicts, &r->nconflicts, kind, is_edge, type, id, idlen, message, NULL);
}

typedef struct merge_ctx {
    og_engine *e;
    const char *source_branch, *target_branch;
    char source_head[OG_ULID_LEN + 1];
    og_merge_result *res;
    const og_merge_opts *opts;
    og_merge_resolve resolve;
} merge_ctx;

static uint64_t ver(const og_table_ref *r) { return r ? r->version : 0; }

static int bitset(const uint8_t *b, size_t i) { return b && ((b[i >> 3] >> (i & 7)) & 1); }

/* The target view's row addresses, and whether they ascend (then an address is found by
 * binary search).  Built once per merged table, from the view's base (no column is read). */
typedef struct addr_index {
    const uint64_t *addrs;
    size_t n;
    int ready, ascending;
} addr_index;

/* The target's committed row of a source change whose id the target did not change: the row
 * the base->source diff read sits at the same address in the target when the target still
 * holds that fragment, so it is found without the table's id map (whose first use reads the
 * whole id column: the cost a 10-row merge of a 1M-row table must not pay).  The address is
 * confirmed by reading that one row's id from the target; -1 when it is not there (the
 * target moved the row, e.g. a compaction): the caller falls back to the id map. */
static og_status row_by_address(og_plan *p, og_plan_table *pt, addr_index *ix, uint64_t addr, const og_change *ch,
                                long *out)
{
    *out = -1;
    OG_TRY(og_plan_table_view(p, pt));
    if (!ix->ready) {
        OG_TRY(og_tableview_addrs(pt->view, &ix->addrs));
        ix->n = og_tableview_rows(pt->view);
        ix->ascending = 1;
        for (size_t i = 1; i < ix->n && ix->ascending; i++) ix->ascending = ix->addrs[i - 1] < ix->addrs[i];
        ix->ready = 1;
    }
    if (!ix->ascending) return OG_OK;
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->addrs[mid] < addr) lo = mid + 1;
        else hi = mid;
    }
    if (lo == ix->n || ix->addrs[lo] != addr) return OG_OK;
    int32_t fid = OG_FIELD_ID;
    uint32_t off = (uint32_t)(addr & 0xffffffffu);
    og_vector idv;
    memset(&idv, 0, sizeof idv);
    OG_TRY(og_table_take(og_tableview_table(pt->view), og_tableview_manifest(pt->view), addr >> 32, &off, 1, &fid, 1,
                         &idv));
    size_t n;
    const uint8_t *id = og_vector_get_bytes(&idv, 0, &n);
    if (n == ch->idlen && !memcmp(id, ch->id, n)) *out = (long)lo;
    og_vector_free(&idv);
    return OG_OK;
}

/* Stages the after image of source change ch (an insert or update) on the target plan. */
static og_status stage_after(og_plan *p, og_plan_table *pt, const og_table_delta *d, const og_change *ch)
{
    OG_TRY(og_plan_table_cols(pt));
    og_vector *one = calloc(d->after.ncols, sizeof *one);
    if (!one) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    for (size_t c = 0; c < d->after.ncols && st == OG_OK; c++) st = og_vector_gather(&one[c], &d->after.cols[c], &ch->after, 1);
    uint32_t row;
    long prev;
    if (st == OG_OK) st = og_plan_stage_vectors(p, pt, one, &row, &prev);
    if (st == OG_OK && prev >= 0) og_plan_supersede(pt, (uint32_t)prev);
    for (size_t c = 0; c < d->after.ncols; c++) og_vector_free(&one[c]);
    free(one);
    return st;
}

/* Stages one source-side change on the target plan. */
static og_status apply_change(og_plan *p, og_plan_table *pt, addr_index *ix, const og_table_delta *d,
                              const og_change *ch, og_merge_result *res)
{
    if (ch->op != OG_CHANGE_INSERT) {
        long crow = -1;
        if (d->before.addrs) OG_TRY(row_by_address(p, pt, ix, d->before.addrs[ch->before], ch, &crow));
        if (crow < 0) crow = og_plan_committed_find(p, pt, (const char *)ch->id, ch->idlen);
        if (crow >= 0) OG_TRY(og_plan_remove_committed(p, pt, (uint32_t)crow));
    }
    if (ch->op == OG_CHANGE_DELETE) {
        res->deleted++;
        return OG_OK;
    }
    OG_TRY(stage_after(p, pt, d, ch));
    if (ch->op == OG_CHANGE_INSERT) res->inserted++;
    else res->updated++;
    return OG_OK;
}

/* A conflict settled for the source ("theirs"): the target's row of that id (whatever the
 * target did to it) is replaced by the source's image, or removed when the source deleted it. */
static og_status take_source(og_plan *p, og_plan_table *pt, const og_table_delta *d, const og_change *ch,
                             og_merge_result *res)
{
    long crow = og_plan_committed_find(p, pt, (const char *)ch->id, ch->idlen);
    if (crow >= 0) OG_TRY(og_plan_remove_committed(p, pt, (uint32_t)crow));
    if (ch->op == OG_CHANGE_DELETE) {
        res->deleted++;
        return OG_OK;
    }
    OG_TRY(stage_after(p, pt, d, ch));
    if (crow >= 0) res->updated++;
    else res->inserted++;
    return OG_OK;
}

static int side_present(const og_change *ch) { return ch->op != OG_CHANGE_DELETE; }

/* A cell as compact JSON text for a message, cut at 48 bytes. */
static void value_text(og_buf *b, json_t *v)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!s) {
        og_buf_printf(b, "?");
        return;
    }
    size_t n = strlen(s);
    if (n > 48) {
        size_t cut = 45;
        while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80) cut--; /* not inside a UTF-8 sequence */
        og_buf_printf(b, "%.*s...", (int)cut, s);
    } else {
        og_buf_printf(b, "%s", s);
    }
    free(s);
}

/* The properties in which a row conflict's sides differ: both sides present → where their
 * images differ; one side deleted → where the other side's image differs from the base.
 * *props receives [{"property","base"?,"source"?,"target"?}]; `text` the readable list. */
static og_status conflict_details(const merge_ctx *c, const og_plan_table *pt, const og_table_delta *ds,
                                  const og_change *cs, const og_table_delta *dt, const og_change *ct, json_t **props,
                                  og_buf *text)
{
    const og_vector *bv = NULL, *sv = NULL, *tv = NULL;
    size_t br = 0, sr = cs->after, tr = ct->after;
    if (cs->before != OG_CHANGE_NO_ROW) bv = ds->before.cols, br = cs->before;
    else if (ct->before != OG_CHANGE_NO_ROW) bv = dt->before.cols, br = ct->before;
    if (cs->after != OG_CHANGE_NO_ROW) sv = ds->after.cols;
    if (ct->after != OG_CHANGE_NO_ROW) tv = dt->after.cols;
    size_t ncols = ds->after.ncols ? ds->after.ncols : ds->before.ncols;
    size_t first_prop = pt->is_edge ? 3 : 1;
    *props = json_array();
    if (!*props) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t listed = 0;
    for (size_t col = 1; col < ncols; col++) {
        int differ;
        if (sv && tv) differ = !og_vector_row_eq(&sv[col], sr, &tv[col], tr);
        else if (bv && (sv || tv)) differ = sv ? !og_vector_row_eq(&sv[col], sr, &bv[col], br)
                                               : !og_vector_row_eq(&tv[col], tr, &bv[col], br);
        else differ = 0;
        if (!differ) continue;
        const char *name = col >= first_prop ? pt->t->props[col - first_prop].name : col == 1 ? "from" : "to";
        json_t *o = json_object();
        json_object_set_new(o, "property", json_string(name));
        json_t *bj = bv ? og_export_value_json(&bv[col], br) : NULL, *sj = sv ? og_export_value_json(&sv[col], sr) : NULL,
               *tj = tv ? og_export_value_json(&tv[col], tr) : NULL;
        og_buf_printf(text, "%s%s: ", listed++ ? "; " : "", name);
        if (sj && tj) {
            value_text(text, sj);
            og_buf_printf(text, " on %s, ", c->source_branch);
            value_text(text, tj);
            og_buf_printf(text, " on %s", c->target_branch);
            if (bj) {
                og_buf_printf(text, " (was ");
                value_text(text, bj);
                og_buf_printf(text, ")");
            }
        } else if (bj && (sj || tj)) {
            value_text(text, bj);
            og_buf_printf(text, " -> ");
            value_text(text, sj ? sj : tj);
        }
        if (bj) json_object_set_new(o, "base", bj);
        if (sj) json_object_set_new(o, "source", sj);
        if (tj) json_object_set_new(o, "target", tj);
        json_array_append_new(*props, o);
    }
    return OG_OK;
}

/* The three-way merge of one table. */
static og_status merge_table(merge_ctx *c, og_plan *p, og_plan_table *pt, og_graph *g, const char *dir,
                             const og_table_ref *rb, const og_table_ref *rs, const og_table_ref *rt)
{
    og_merge_result *res = c->res;
    og_table_delta ds, dt;
    memset(&dt, 0, sizeof dt);
    OG_TRY(og_table_delta_compute(g, pt->t, pt->is_edge, pt->index, dir, rb, rs, &ds));
    og_status st = OG_OK;
    addr_index ix = {NULL, 0, 0, 0};
    if (ver(rt) != ver(rb)) st = og_table_delta_compute(g, pt->t, pt->is_edge, pt->index, dir, rb, rt, &dt);
    res->fragments_skipped += ds.fragments_skipped + dt.fragments_skipped;
    res->fragments_read += ds.fragments_read + dt.fragments_read;
    res->rows_read += ds.rows_read + dt.rows_read;
    for (size_t i = 0; i < ds.nchanges && st == OG_OK; i++) {
        const og_change *cs = &ds.changes[i];
        const og_change *ct = dt.nchanges ? og_table_delta_find(&dt, cs->id, cs->idlen) : NULL;
        if (!ct) {
            st = apply_change(p, pt, &ix, &ds, cs, res);
            continue;
        }
        int s_has = side_present(cs), t_has = side_present(ct);
        if (!s_has && !t_has) continue; /* both deleted */
        if (s_has && t_has) {
            int same = 1;
            for (size_t col = 0; col < ds.after.ncols && same; col++)
                same = og_vector_row_eq(&ds.after.cols[col], cs->after, &dt.after.cols[col], ct->after);
            if (same) continue; /* convergent */
        }
        og_conflict_kind kind = cs->op == OG_CHANGE_INSERT ? OG_CONFLICT_DIVERGENT_INSERT
                                : (!s_has || !t_has)      ? OG_CONFLICT_DELETE_VS_UPDATE
                                                          : OG_CONFLICT_DIVERGENT_UPDATE;
        json_t *props = NULL;
        og_buf detail = OG_BUF_INIT, msg = OG_BUF_INIT;
        st = conflict_details(c, pt, &ds, cs, &dt, ct, &props, &detail);
        og_buf_printf(&msg, "%s '%.*s' ", pt->t->name, (int)cs->idlen, (const char *)cs->id);
        if (kind == OG_CONFLICT_DIVERGENT_INSERT)
            og_buf_printf(&msg, "was inserted on both %s and %s with different values", c->source_branch, c->target_branch);
        else if (kind == OG_CONFLICT_DIVERGENT_UPDATE)
            og_buf_printf(&msg, "was changed differently on %s and %s", c->source_branch, c->target_branch);
        else
            og_buf_printf(&msg, "was deleted on %s and updated on %s", s_has ? c->target_branch : c->source_branch,
                          s_has ? c->source_branch : c->target_branch);
        if (detail.len) og_buf_printf(&msg, ": %s", og_buf_cstr(&detail));
        og_merge_side side = c->resolve.side[kind];
        if (st == OG_OK && side == OG_MERGE_SIDE_THEIRS) st = take_source(p, pt, &ds, cs, res);
        if (st != OG_OK) {
            json_decref(props);
        } else if (side == OG_MERGE_SIDE_OURS || side == OG_MERGE_SIDE_THEIRS) {
            st = push_conflict(&res->resolved, &res->nresolved, kind, pt->is_edge, pt->t->name, cs->id, cs->idlen,
                               og_buf_cstr(&msg), props);
            if (st == OG_OK) res->resolved[res->nresolved - 1].resolution = side;
        } else {
            st = push_conflict(&res->conflicts, &res->nconflicts, kind, pt->is_edge, pt->t->name, cs->id, cs->idlen,
                               og_buf_cstr(&msg), props);
        }
        og_buf_free(&detail);
        og_buf_free(&msg);
    }
    og_table_delta_free(&ds);
    og_table_delta_free(&dt);
    return st;
}

/* 1 when node id[0..len) is in plan table pt's new image. */
static int node_in_image(og_plan *p, og_plan_table *pt, const uint8_t *id, size_t len)
{
    if (og_plan_staged_find(pt, (const char *)id, len) >= 0) return 1;
    return og_plan_committed_find(p, pt, (const char *)id, len) >= 0;
}

static og_status orphan(og_merge_result *res, const og_cat_type *et, const uint8_t *id, size_t idlen, const char *end,
                        const uint8_t *node, size_t nlen, const og_cat_type *nt)
{
    char msg[640];
    snprintf(msg, sizeof msg, "%s '%.*s' would point at a deleted node: its %s %s '%.*s' is not in the merged graph",
             et->name, (int)idlen, (const char *)id, end, nt->name, (int)nlen, (const char *)node);
    return add_conflict(res, OG_CONFLICT_ORPHAN_EDGE, 1, et->name, id, idlen, msg);
}

/* Every edge of the merged image whose endpoint is missing: staged edges, and kept committed
 * edges of types whose endpoint node tables lost rows. */
static og_status check_orphans(og_plan *p, og_merge_result *res)
{
    for (size_t i = 0; i < p->cat->nnodes; i++) OG_TRY(og_plan_index_ids(&p->nodes[i]));
    for (size_t ei = 0; ei < p->cat->nedges; ei++) {
        og_plan_table *et = &p->edges[ei];
        const og_cat_type *t = et->t;
        og_plan_table *from = &p->nodes[t->from_node], *to = &p->nodes[t->to_node];
        for (size_t r = 0; r < et->nstaged; r++) {
            if (bitset(et->superseded, r)) continue;
            size_t n, ns, nd;
            const uint8_t *id = og_vector_get_bytes(&et->cols[0], r, &n);
            const uint8_t *s = og_vector_get_bytes(&et->cols[1], r, &ns), *d = og_vector_get_bytes(&et->cols[2], r, &nd);
            if (!node_in_image(p, from, s, ns)) OG_TRY(orphan(res, t, id, n, "src", s, ns, from->t));
            if (!node_in_image(p, to, d, nd)) OG_TRY(orphan(res, t, id, n, "dst", d, nd, to->t));
        }
        if (!from->nremoved && !to->nremoved) continue;
        OG_TRY(og_plan_table_view(p, et));
        const og_vector *idc, *src, *dst;
        OG_TRY(og_tableview_column(et->view, OG_FIELD_ID, &idc));
        OG_TRY(og_tableview_column(et->view, OG_FIELD_SRC, &src));
        OG_TRY(og_tableview_column(et->view, OG_FIELD_DST, &dst));
        for (size_t r = 0; r < og_tableview_rows(et->view); r++) {
            if (et->overwrite || bitset(et->removed, r)) continue;
            size_t n, ns, nd;
            const uint8_t *id = og_vector_get_bytes(idc, r, &n);
            const uint8_t *s = og_vector_get_bytes(src, r, &ns), *d = og_vector_get_bytes(dst, r, &nd);
            if (from->nremoved && !node_in_image(p, from, s, ns)) OG_TRY(orphan(res, t, id, n, "src", s, ns, from->t));
            if (to->nremoved && !node_in_image(p, to, d, nd)) OG_TRY(orphan(res, t, id, n, "dst", d, nd, to->t));
        }
    }
    return OG_OK;
}

/* A validator failure (OG_ERR_CONSTRAINT, message in og_error_message) as one conflict. */
static og_status validation_conflict(og_plan *p, og_merge_result *res)
{
    const char *msg = og_error_message();
    og_conflict_kind kind = strstr(msg, "@unique") ? OG_CONFLICT_UNIQUE_VIOLATION
                            : strstr(msg, "@card") ? OG_CONFLICT_CARDINALITY_VIOLATION
                            : strstr(msg, "orphan") || strstr(msg, "not found in") ? OG_CONFLICT_ORPHAN_EDGE
                                                                                    : OG_CONFLICT_VALUE_CONSTRAINT_VIOLATION;
    /* the type: the catalog type named earliest in the message */
    const char *type = "", *best = NULL;
    int is_edge = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->cat->nedges : p->cat->nnodes;
        for (size_t i = 0; i < n; i++) {
            const og_cat_type *t = pass ? &p->cat->edges[i] : &p->cat->nodes[i];
            const char *at = strstr(msg, t->name);
            if (at && (!best || at < best || (at == best && strlen(t->name) > strlen(type))))
                best = at, type = t->name, is_edge = pass;
        }
    }
    char *copy = strdup(msg);
    if (!copy) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = add_conflict(res, kind, is_edge, type, NULL, 0, copy);
    free(copy);
    return st;
}

/* OG_ERR_CONFLICT listing every conflict in res. */
static og_status conflict_error(const merge_ctx *c)
{
    og_buf b = OG_BUF_INIT;
    og_buf_printf(&b, "merge conflicts: merge of %s into %s: %zu conflict%s:", c->source_branch, c->target_branch, c->res->nconflicts,
                  c->res->nconflicts == 1 ? "" : "s");
    /* the thread's message holds about 1 KiB: list what fits, then count the rest (the
     * result's conflict list is always complete) */
    for (size_t i = 0; i < c->res->nconflicts; i++) {
        const og_merge_conflict *k = &c->res->conflicts[i];
        size_t mark = b.len;
        og_buf_printf(&b, "\n  %s: %s", og_conflict_kind_name(k->kind), k->message);
        if (b.len > 900) {
            b.len = mark;
            og_buf_printf(&b, "\n  ... and %zu more", c->res->nconflicts - i);
            break;
        }
    }
    og_status st = og_err(OG_ERR_CONFLICT, "%s", og_buf_cstr(&b));
    og_buf_free(&b);
    return st;
}

static og_status fast_forward(const og_snapshot *base, const og_commit *sc, og_commit_draft *draft)
{
    const og_commit *tc = og_snapshot_commit(base);
    for (size_t i = 0; i < tc->ntables; i++)
        if (!og_commit_table(sc, tc->tables[i].dir)) OG_TRY(og_draft_remove_table(draft, tc->tables[i].dir));
    for (size_t i = 0; i < sc->ntables; i++)
        OG_TRY(og_draft_set_table(draft, sc->tables[i].dir, sc->tables[i].version, sc->tables[i].rows));
    OG_TRY(og_draft_set_schema(draft, sc->schema));
    OG_TRY(og_draft_set_operation(draft, OG_OP_MERGE, "fast_forward"));
    return og_draft_add_parent(draft, sc->id);
}

static og_status three_way(merge_ctx *c, og_graph *g, const og_snapshot *base, const og_commit *bc,
                           const og_commit *sc, og_commit_draft *draft)
{
    og_merge_result *res = c->res;
    if (strcmp(bc->schema, sc->schema) || strcmp(bc->schema, og_snapshot_schema_id(base)))
        return og_err(OG_ERR_UNSUPPORTED,
                      "merge of %s into %s: the merge base, source and target have different schemas (apply the "
                      "schema change on both sides first)",
                      c->source_branch, c->target_branch);
    og_read *r;
    OG_TRY(og_read_begin_at(&r, c->e, base));
    og_plan plan;
    og_status st = og_plan_init(&plan, r, NULL);
    const og_catalog *cat = og_read_catalog(r);
    for (int pass = 0; pass < 2 && st == OG_OK; pass++) {
        size_t n = pass ? cat->nedges : cat->nnodes;
        for (size_t i = 0; i < n && st == OG_OK; i++) {
            og_plan_table *pt = pass ? &plan.edges[i] : &plan.nodes[i];
            char dir[64];
            og_cat_type_table_dir(pt->t, dir, sizeof dir);
            const og_table_ref *rb = og_commit_table(bc, dir), *rs = og_commit_table(sc, dir),
                               *rt = og_snapshot_table(base, dir);
            if (ver(rs) == ver(rt) || ver(rs) == ver(rb)) continue; /* the source did not change it */
            st = merge_table(c, &plan, pt, g, dir, rb, rs, rt);
        }
    }
    if (st == OG_OK) st = og_plan_lookup_status(&plan); /* conflicts may stand on a failed read */
    if (st == OG_OK && !res->nconflicts) st = check_orphans(&plan, res);
    if (st == OG_OK && !res->nconflicts) {
        st = og_plan_validate(&plan);
        if (st == OG_ERR_CONSTRAINT) st = validation_conflict(&plan, res);
    }
    if (st == OG_OK && res->nconflicts) st = conflict_error(c);
    size_t ntables = 0;
    if (st == OG_OK && c->resolve.dry_run) { /* decided and validated: write nothing */
        og_plan_free(&plan);
        og_read_end(r);
        return OG_OK;
    }
    if (st == OG_OK) st = og_plan_write(&plan, draft, &ntables);
    if (st == OG_OK) st = og_draft_set_operation(draft, OG_OP_MERGE, "merged");
    if (st == OG_OK) st = og_draft_set_stat(draft, "inserted", (int64_t)res->inserted);
    if (st == OG_OK) st = og_draft_set_stat(draft, "updated", (int64_t)res->updated);
    if (st == OG_OK) st = og_draft_set_stat(draft, "deleted", (int64_t)res->deleted);
    if (st == OG_OK) st = og_draft_add_parent(draft, sc->id);
    og_plan_free(&plan);
    og_read_end(r);
    return st;
}

static og_status merge_plan(merge_ctx *c, og_graph *g, const og_snapshot *base, og_commit_draft *draft)
{
    og_merge_result *res = c->res;
    conflicts_clear(res);
    res->inserted = res->updated = res->deleted = 0;
    res->fragments_skipped = res->fragments_read = 0;
    res->rows_read = 0;
    const char *target = og_snapshot_commit_id(base);
    snprintf(res->target_head, sizeof res->target_head, "%s", target);
    if (!strcmp(target, c->source_head)) {
        res->outcome = OG_MERGE_ALREADY_UP_TO_DATE;
        snprintf(res->base, sizeof res->base, "%s", target);
        og_draft_set_noop(draft);
        return OG_OK;
    }
    int found;
    OG_TRY(og_history_merge_base(g, target, c->source_head, res->base, &found));
    if (!found)
        return og_err(OG_ERR_NOT_FOUND,
                      "merge of %s into %s: the branches share no retained commit (their common history was "
                      "reclaimed by cleanup; docs/maintenance.md)",
                      c->source_branch, c->target_branch);
    if (!strcmp(res->base, c->source_head)) {
        res->outcome = OG_MERGE_ALREADY_UP_TO_DATE;
        og_draft_set_noop(draft);
        return OG_OK;
    }
    const og_commit *sc, *bc;
    og_cache_entry *hs, *hb;
    OG_TRY(og_graph_commit_get(g, c->source_head, &sc, &hs));
    og_status st;
    if (!strcmp(res->base, target)) {
        res->outcome = OG_MERGE_FAST_FORWARD;
        st = fast_forward(base, sc, draft);
    } else {
        res->outcome = OG_MERGE_MERGED;
        st = og_graph_commit_get(g, res->base, &bc, &hb);
        if (st == OG_OK) {
            st = three_way(c, g, base, bc, sc, draft);
            og_cache_entry_release(hb);
        }
    }
    og_cache_entry_release(hs);
    return st;
}

static og_status merge_attempt(void *vctx, og_graph *g, const og_snapshot *base, og_commit_draft *draft, int attempt)
{
    merge_ctx *c = vctx;
    og_status st = merge_plan(c, g, base, draft);
    if (st == OG_OK && c->resolve.dry_run) og_draft_set_noop(draft); /* nothing is published */
    if (st == OG_OK && c->opts->attempt_hook) c->opts->attempt_hook(attempt, c->opts->attempt_hook_arg);
    return st;
}

og_status og_engine_merge(og_engine *e, const og_merge_opts *o, og_merge_result *out)
{
    return og_engine_merge_resolve(e, o, NULL, out);
}

/* The target's head, looked up beside the source's (og_engine_merge_resolve). */
typedef struct head_fetch {
    og_graph *g;
    const char *branch;
    og_ref_entry head;
    og_status st;
} head_fetch;

static void *head_fetch_run(void *arg)
{
    head_fetch *h = arg;
    h->st = og_graph_head_entry(h->g, h->branch, &h->head);
    return NULL;
}

og_status og_engine_merge_resolve(og_engine *e, const og_merge_opts *o, const og_merge_resolve *resolve,
                                  og_merge_result *out)
{
    memset(out, 0, sizeof *out);
    if (!o || !o->source) return og_err(OG_ERR_INVALID, "merge: a source branch is required");
    const char *target = o->target ? o->target : "main";
    if (!strcmp(o->source, target)) return og_err(OG_ERR_INVALID, "merge: source and target are both '%s'", target);
    og_graph *g = og_engine_graph(e);
    /* The two heads do not depend on each other: the target's is read in a second thread
     * while this one reads the source's, so they cost one round trip, not two.  The write
     * takes the target's head from here (og_write_opts.first_head); when that lookup failed,
     * the write looks it up itself and reports what it finds. */
    head_fetch tf = {g, target, {0}, OG_ERR_INTERNAL};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, head_fetch_run, &tf) == 0;
    og_ref_entry src;
    og_status sst = og_graph_head_entry(g, o->source, &src);
    if (threaded) pthread_join(th, NULL);
    OG_TRY(sst);
    if (src.kind == OG_REF_DELETE) return og_err(OG_ERR_NOT_FOUND, "branch '%s' was deleted", o->source);
    merge_ctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.source_branch = o->source;
    c.target_branch = target;
    c.res = out;
    c.opts = o;
    if (resolve) c.resolve = *resolve;
    snprintf(c.source_head, sizeof c.source_head, "%s", src.commit);
    snprintf(out->source_head, sizeof out->source_head, "%s", src.commit);
    og_write_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.branch = target;
    wo.actor = og_engine_actor(e);
    wo.actor_via = og_engine_actor_via(e);
    wo.expected_head = o->expected_head;
    wo.message = og_engine_message();
    if (threaded && tf.st == OG_OK) wo.first_head = &tf.head;
    og_status st = og_graph_write(g, &wo, merge_attempt, &c, &out->write);
    /* later cleanup calls may have replaced the thread's message: state the conflicts last */
    if (st == OG_ERR_CONFLICT && out->nconflicts) st = conflict_error(&c);
    return st;
}
