/*
 * schema.c — the schema language's front door (schema.h): parse + check + fresh identities in
 * one call, and the human / JSON summaries printed by `omnigraph schema check`.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/schema.h"
#include "compiler/schema_internal.h"
#include "util/error.h"

og_status og_schema_compile(og_catalog **out, const char *file, const char *text, size_t len, og_diags *diags)
{
    *out = NULL;
    og_diags local = OG_DIAGS_INIT;
    og_diags *ds = diags ? diags : &local;
    og_source src;
    OG_TRY(og_source_init(&src, file, text, len));
    og_catalog *cat = calloc(1, sizeof *cat);
    og_status st = cat ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) st = og_schema_parse(cat, &src, ds);
    if (st == OG_OK) st = og_catalog_check(cat, &src, ds);
    if (st == OG_OK) st = og_catalog_assign_ids(cat, 1);
    if (st == OG_OK) {
        /* at creation @rename_from hints are inert (spec §7) */
        og_cat_type *kinds[3] = {cat->interfaces, cat->nodes, cat->edges};
        size_t counts[3] = {cat->ninterfaces, cat->nnodes, cat->nedges};
        for (int k = 0; k < 3 && st == OG_OK; k++)
            for (size_t i = 0; i < counts[k] && st == OG_OK; i++) {
                og_cat_type *t = &kinds[k][i];
                if (t->rename_from) {
                    og_diag d;
                    st = og_diag_set(&d, OG_OK, &src, t->off, t->off + 1, "hints only matter when evolving an accepted schema",
                                     "@rename_from(\"%s\") on %s %s is inert when a graph is created", t->rename_from,
                                     og_type_kind_name(t->kind), t->name);
                    d.warning = 1;
                    if (st == OG_OK) st = og_diags_push(ds, &d);
                }
                for (size_t j = 0; j < t->nprops && st == OG_OK; j++) {
                    const og_cat_prop *p = &t->props[j];
                    if (!p->rename_from || p->interface) continue;
                    og_diag d;
                    st = og_diag_set(&d, OG_OK, &src, p->off, p->off + 1, "hints only matter when evolving an accepted schema",
                                     "@rename_from(\"%s\") on property %s.%s is inert when a graph is created", p->rename_from,
                                     t->name, p->name);
                    d.warning = 1;
                    if (st == OG_OK) st = og_diags_push(ds, &d);
                }
            }
        og_error_clear();
    }
    if (st == OG_OK) {
        cat->source = og_sndup(text ? text : "", text ? len : 0);
        if (!cat->source) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    og_diags_sort(ds);
    if (st != OG_OK && ds->len && ds->v[0].message && st != OG_ERR_NOMEM) {
        /* leave the first error as the thread's message */
        const og_diag *d = NULL;
        for (size_t i = 0; i < ds->len && !d; i++)
            if (!ds->v[i].warning) d = &ds->v[i];
        if (d) og_err(st, "%s:%u:%u: %s", d->file ? d->file : "<input>", d->line, d->col, d->message);
    }
    og_source_free(&src);
    og_diags_free(&local);
    if (st != OG_OK) {
        og_catalog_free(cat);
        return st;
    }
    *out = cat;
    return OG_OK;
}

void og_schema_count(og_schema_counts *c, const og_catalog *cat)
{
    memset(c, 0, sizeof *c);
    c->interfaces = cat->ninterfaces;
    c->nodes = cat->nnodes;
    c->edges = cat->nedges;
    for (int k = 0; k < 2; k++) {
        const og_cat_type *v = k ? cat->edges : cat->nodes;
        size_t n = k ? cat->nedges : cat->nnodes;
        for (size_t i = 0; i < n; i++) {
            c->properties += v[i].nprops;
            c->constraints += v[i].ncons;
            for (size_t j = 0; j < v[i].ncons; j++) switch (v[i].cons[j].kind) {
                case OG_CONS_KEY: c->keys++; break;
                case OG_CONS_UNIQUE: c->uniques++; break;
                case OG_CONS_INDEX: c->indexes++; break;
                case OG_CONS_RANGE: c->ranges++; break;
                case OG_CONS_CHECK: c->checks++; break;
                }
            for (size_t j = 0; j < v[i].nprops; j++) {
                switch (v[i].props[j].index) {
                case OG_INDEX_BTREE: c->btree++; break;
                case OG_INDEX_INVERTED: c->inverted++; break;
                case OG_INDEX_VECTOR: c->vector++; break;
                default: break;
                }
                if (v[i].props[j].embed_source) c->embeds++;
            }
        }
    }
}

static og_status type_line(og_buf *out, const og_cat_type *t)
{
    OG_TRY(og_buf_printf(out, "  %s %s", og_type_kind_name(t->kind), t->name));
    if (t->kind == OG_KIND_EDGE) {
        OG_TRY(og_buf_printf(out, ": %s -> %s", t->from, t->to));
        if (t->card_written || t->card_min || t->card_max != OG_CARD_UNBOUNDED) {
            if (t->card_max == OG_CARD_UNBOUNDED) OG_TRY(og_buf_printf(out, " @card(%u..)", t->card_min));
            else OG_TRY(og_buf_printf(out, " @card(%u..%u)", t->card_min, t->card_max));
        }
    }
    OG_TRY(og_buf_printf(out, " (%zu properties", t->nprops));
    if (t->nkey) {
        OG_TRY(og_buf_append_str(out, ", key "));
        for (size_t i = 0; i < t->nkey; i++)
            OG_TRY(og_buf_printf(out, "%s%s", i ? "," : "", t->props[t->key_props[i]].name));
    }
    if (t->ncons) OG_TRY(og_buf_printf(out, ", %zu constraints", t->ncons));
    return og_buf_append_str(out, ")\n");
}

og_status og_schema_summary(og_buf *out, const og_catalog *cat)
{
    og_schema_counts c;
    og_schema_count(&c, cat);
    OG_TRY(og_buf_printf(out,
                         "%zu interfaces, %zu node types, %zu edge types, %zu properties\n"
                         "%zu constraints (%zu key, %zu unique, %zu index, %zu range, %zu check)\n"
                         "index intents: %zu btree, %zu inverted, %zu vector (%zu @embed)\n",
                         c.interfaces, c.nodes, c.edges, c.properties, c.constraints, c.keys, c.uniques, c.indexes,
                         c.ranges, c.checks, c.btree, c.inverted, c.vector, c.embeds));
    for (size_t i = 0; i < cat->ninterfaces; i++) OG_TRY(type_line(out, &cat->interfaces[i]));
    for (size_t i = 0; i < cat->nnodes; i++) OG_TRY(type_line(out, &cat->nodes[i]));
    for (size_t i = 0; i < cat->nedges; i++) OG_TRY(type_line(out, &cat->edges[i]));
    return OG_OK;
}

og_status og_schema_summary_json(og_buf *out, const og_catalog *cat)
{
    og_schema_counts c;
    og_schema_count(&c, cat);
    return og_buf_printf(out,
                         "{\"interfaces\":%zu,\"node_types\":%zu,\"edge_types\":%zu,\"properties\":%zu,"
                         "\"constraints\":{\"total\":%zu,\"key\":%zu,\"unique\":%zu,\"index\":%zu,\"range\":%zu,\"check\":%zu},"
                         "\"index_intents\":{\"btree\":%zu,\"inverted\":%zu,\"vector\":%zu},\"embeds\":%zu}",
                         c.interfaces, c.nodes, c.edges, c.properties, c.constraints, c.keys, c.uniques, c.indexes,
                         c.ranges, c.checks, c.btree, c.inverted, c.vector, c.embeds);
}
