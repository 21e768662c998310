/*
 * migrate.c — schema evolution planning (migrate.h, reference-language.md §7).
 *
 * Two phases:
 *   1. identity resolution: the desired .pg is parsed and checked, then each desired type and
 *      property takes the stable id of the accepted declaration with the same kind and name,
 *      else of the one its @rename_from names (same kind; same owner for properties); the rest
 *      get fresh ids from the accepted allocator high-water mark, canonically ordered.
 *   2. diff by identity: accepted x desired -> ordered steps; everything the §7 matrix refuses
 *      becomes an UNSUPPORTED step with a reason (and OG-MF-103 / OG-MF-106 where the
 *      reference emits them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/migrate.h"
#include "compiler/schema.h"
#include "compiler/schema_internal.h"
#include "util/error.h"

const char *og_step_kind_name(og_step_kind k)
{
    static const char *const names[] = {"add_type", "rename_type", "add_property", "rename_property", "add_constraint",
                                        "extend_enum", "update_type_metadata", "update_property_metadata", "drop_type",
                                        "drop_property", "unsupported_change"};
    return (unsigned)k <= OG_STEP_UNSUPPORTED ? names[k] : "unknown";
}

static const char *step_title(og_step_kind k)
{
    static const char *const names[] = {"AddType", "RenameType", "AddProperty", "RenameProperty", "AddConstraint",
                                        "ExtendEnum", "UpdateTypeMetadata", "UpdatePropertyMetadata", "DropType",
                                        "DropProperty", "UnsupportedChange"};
    return (unsigned)k <= OG_STEP_UNSUPPORTED ? names[k] : "Unknown";
}

static void step_clear(og_migration_step *s)
{
    free(s->type_name);
    free(s->property_name);
    free(s->from);
    free(s->to);
    free(s->detail);
    free(s->entity);
    free(s->reason);
    memset(s, 0, sizeof *s);
}

void og_migration_plan_free(og_migration_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nsteps; i++) step_clear(&p->steps[i]);
    free(p->steps);
    og_catalog_free(p->desired);
    memset(p, 0, sizeof *p);
}

/* ---- phase 1: identity resolution ------------------------------------------------------- */

typedef struct resolver {
    const og_catalog *acc;
    og_catalog *des;
    const og_source *src;
    og_diags *diags;
    size_t errors;
    og_status fatal;
} resolver;

static void rdiag(resolver *r, int warning, size_t off, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void rdiag(resolver *r, int warning, size_t off, const char *hint, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    og_diag d;
    if (og_diag_set(&d, warning ? OG_OK : OG_ERR_TYPE, r->src, off, off + 1, hint, "%s", msg) == OG_ERR_NOMEM && !d.message) {
        r->fatal = OG_ERR_NOMEM;
        return;
    }
    d.warning = warning;
    if (!warning) r->errors++;
    if (og_diags_push(r->diags, &d) != OG_OK) r->fatal = OG_ERR_NOMEM;
}

static const og_cat_type *acc_types(const og_catalog *c, og_type_kind k, size_t *n)
{
    switch (k) {
    case OG_KIND_INTERFACE: *n = c->ninterfaces; return c->interfaces;
    case OG_KIND_NODE: *n = c->nnodes; return c->nodes;
    default: *n = c->nedges; return c->edges;
    }
}

static og_cat_type *des_types(og_catalog *c, og_type_kind k, size_t *n)
{
    return (og_cat_type *)acc_types(c, k, n);
}

static const og_cat_type *acc_find(const og_catalog *c, og_type_kind k, const char *name)
{
    size_t n;
    const og_cat_type *v = acc_types(c, k, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name)) return &v[i];
    return NULL;
}

static const og_cat_type *acc_by_id(const og_catalog *c, uint64_t id) { return og_catalog_type_by_id(c, id); }

static void resolve_types(resolver *r)
{
    size_t nd_all = r->des->ninterfaces + r->des->nnodes + r->des->nedges;
    uint64_t *consumed = calloc(nd_all + 1, sizeof *consumed);
    size_t nconsumed = 0;
    if (!consumed) {
        r->fatal = OG_ERR_NOMEM;
        return;
    }
    for (int k = 0; k < 3; k++) {
        size_t n;
        og_cat_type *v = des_types(r->des, (og_type_kind)k, &n);
        for (size_t i = 0; i < n; i++) {
            og_cat_type *t = &v[i];
            const char *kn = og_type_kind_name(t->kind);
            const og_cat_type *m = acc_find(r->acc, t->kind, t->name);
            if (m) {
                if (t->rename_from)
                    rdiag(r, 1, t->off, "remove the hint once the rename has been applied",
                          "@rename_from(\"%s\") on %s %s is ignored: the name already matches an accepted %s", t->rename_from, kn,
                          t->name, kn);
            } else if (t->rename_from) {
                const og_cat_type *same = acc_find(r->acc, t->kind, t->rename_from);
                if (!same) {
                    int other = acc_find(r->acc, OG_KIND_INTERFACE, t->rename_from) || acc_find(r->acc, OG_KIND_NODE, t->rename_from) ||
                                acc_find(r->acc, OG_KIND_EDGE, t->rename_from);
                    if (other)
                        rdiag(r, 0, t->off, "a rename keeps the declaration kind (node -> node, edge -> edge)",
                              "%s '%s' cannot rename accepted '%s' across declaration kinds", kn, t->name, t->rename_from);
                    else
                        rdiag(r, 0, t->off, "name the type as it is in the accepted schema, or drop the hint",
                              "%s '%s' declares @rename_from(\"%s\") but no accepted declaration has that name", kn, t->name,
                              t->rename_from);
                    continue;
                }
                m = same;
            }
            if (!m) continue;
            int dup = 0;
            for (size_t j = 0; j < nconsumed; j++)
                if (consumed[j] == m->id) dup = 1;
            if (dup) {
                rdiag(r, 0, t->off, "only one desired declaration may take over an accepted one",
                      "accepted %s '%s' is consumed by more than one desired declaration", kn, m->name);
                continue;
            }
            consumed[nconsumed++] = m->id;
            t->id = m->id;
            t->incarnation = m->incarnation;
        }
    }
    free(consumed);
}

static void resolve_props(resolver *r)
{
    for (int k = 0; k < 3; k++) {
        size_t n;
        og_cat_type *v = des_types(r->des, (og_type_kind)k, &n);
        for (size_t i = 0; i < n; i++) {
            og_cat_type *t = &v[i];
            const og_cat_type *owner = t->id ? acc_by_id(r->acc, t->id) : NULL;
            for (size_t j = 0; j < t->nprops; j++) {
                og_cat_prop *p = &t->props[j];
                if (!owner) {
                    if (p->rename_from && !p->interface)
                        rdiag(r, 0, p->off, "a new type cannot inherit properties; drop the hint",
                              "new owner '%s:%s' cannot import property identity with @rename_from(\"%s\")", og_type_kind_name(t->kind),
                              t->name, p->rename_from);
                    continue;
                }
                const og_cat_prop *m = og_cat_type_prop(owner, p->name, NULL);
                if (m) {
                    if (p->rename_from && !p->interface)
                        rdiag(r, 1, p->off, "remove the hint once the rename has been applied",
                              "@rename_from(\"%s\") on property %s.%s is ignored: the name already matches", p->rename_from, t->name,
                              p->name);
                } else if (p->rename_from) {
                    m = og_cat_type_prop(owner, p->rename_from, NULL);
                    if (!m) {
                        int elsewhere = 0;
                        for (int kk = 0; kk < 3 && !elsewhere; kk++) {
                            size_t an;
                            const og_cat_type *av = acc_types(r->acc, (og_type_kind)kk, &an);
                            for (size_t a = 0; a < an; a++)
                                if (av[a].id != owner->id && og_cat_type_prop(&av[a], p->rename_from, NULL)) elsewhere = 1;
                        }
                        rdiag(r, 0, p->off, "a property rename stays within its type; add the property anew instead",
                              "property '%s.%s' declares @rename_from(\"%s\"): %s", t->name, p->name, p->rename_from,
                              elsewhere ? "property moves across stable owners are not supported"
                                        : "no accepted property with that name exists under the stable owner");
                        continue;
                    }
                }
                if (!m) continue;
                for (size_t q = 0; q < j; q++)
                    if (t->props[q].id == m->id) {
                        rdiag(r, 0, p->off, "only one desired property may take over an accepted one",
                              "accepted property id %llu (%s.%s) is consumed more than once", (unsigned long long)m->id, owner->name,
                              m->name);
                        m = NULL;
                        break;
                    }
                if (m) p->id = m->id;
            }
        }
    }
}

/* ---- phase 2: steps ----------------------------------------------------------------------- */

typedef struct planner {
    og_migration_plan *plan;
    size_t cap;
    const og_catalog *acc, *des;
    og_status st;
} planner;

static og_migration_step *push_step(planner *pl, og_step_kind kind, og_type_kind tk, const char *type_name,
                                    const char *prop)
{
    if (pl->st != OG_OK) return NULL;
    if (og_grow((void **)&pl->plan->steps, &pl->cap, pl->plan->nsteps, sizeof *pl->plan->steps) != OG_OK) {
        pl->st = OG_ERR_NOMEM;
        return NULL;
    }
    og_migration_step *s = &pl->plan->steps[pl->plan->nsteps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->type_kind = tk;
    s->type_name = og_sdup(type_name);
    s->property_name = og_sdup(prop);
    if (!s->type_name || (prop && !s->property_name)) pl->st = OG_ERR_NOMEM;
    return s;
}

static char *fmt_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_dup(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

static void unsupported(planner *pl, og_type_kind tk, const char *type_name, const char *prop, const char *code,
                        const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void unsupported(planner *pl, og_type_kind tk, const char *type_name, const char *prop, const char *code,
                        const char *fmt, ...)
{
    og_migration_step *s = push_step(pl, OG_STEP_UNSUPPORTED, tk, type_name, prop);
    if (!s) return;
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->reason = og_sdup(msg);
    s->entity = prop ? fmt_dup("%s:%s.%s", og_type_kind_name(tk), type_name, prop) : fmt_dup("%s:%s", og_type_kind_name(tk), type_name);
    s->code = code;
    if (!s->reason || !s->entity) pl->st = OG_ERR_NOMEM;
}

static int str_eq(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

/* Interface properties keep @key/@unique/@index/@embed as annotations (the contract nodes
 * copy); their effects are planned on the implementing nodes, so they are skipped here. */
static int skipped_annot(const og_annotation *a, int iface)
{
    return iface && (!strcmp(a->name, "key") || !strcmp(a->name, "unique") || !strcmp(a->name, "index") ||
                     !strcmp(a->name, "embed"));
}

static int annots_eq_x(const og_annotation *a, size_t na, const og_annotation *b, size_t nb, int iface)
{
    size_t i = 0, j = 0;
    for (;;) {
        while (i < na && skipped_annot(&a[i], iface)) i++;
        while (j < nb && skipped_annot(&b[j], iface)) j++;
        if (i == na || j == nb) return i == na && j == nb;
        if (strcmp(a[i].name, b[j].name) || a[i].nargs != b[j].nargs || a[i].has_parens != b[j].has_parens) return 0;
        for (size_t k = 0; k < a[i].nargs; k++)
            if (!str_eq(a[i].args[k].key, b[j].args[k].key) || a[i].args[k].kind != b[j].args[k].kind ||
                strcmp(a[i].args[k].text, b[j].args[k].text))
                return 0;
        i++;
        j++;
    }
}

static int annots_eq(const og_annotation *a, size_t na, const og_annotation *b, size_t nb)
{
    return annots_eq_x(a, na, b, nb, 0);
}

static char *metadata_detail(const char *desc, const char *instr)
{
    return fmt_dup("description=%s%s%s; instruction=%s%s%s", desc ? "\"" : "", desc ? desc : "none", desc ? "\"" : "",
                   instr ? "\"" : "", instr ? instr : "none", instr ? "\"" : "");
}

static void plan_type_metadata(planner *pl, const og_cat_type *a, const og_cat_type *d)
{
    if (!annots_eq(a->annots, a->n_annots, d->annots, d->n_annots))
        unsupported(pl, d->kind, d->name, NULL, NULL,
                    "changing annotations beyond @description/@instruction is not supported in schema migration v1");
    if (!str_eq(a->description, d->description) || !str_eq(a->instruction, d->instruction)) {
        og_migration_step *s = push_step(pl, OG_STEP_UPDATE_TYPE_METADATA, d->kind, d->name, NULL);
        if (s && !(s->detail = metadata_detail(d->description, d->instruction))) pl->st = OG_ERR_NOMEM;
    }
}

/* Enum widening: both enums, same nullability, accepted values all kept, some new. */
static char *enum_widening(const og_cat_prop *a, const og_cat_prop *d)
{
    if (!a->is_enum || !d->is_enum || a->nullable != d->nullable) return NULL;
    for (size_t i = 0; i < a->n_enum; i++)
        if (!og_cat_prop_enum_has(d, a->enum_values[i], strlen(a->enum_values[i]))) return NULL;
    if (a->n_enum == d->n_enum) return NULL;
    og_buf b = OG_BUF_INIT;
    for (size_t i = 0; i < d->n_enum; i++)
        if (!og_cat_prop_enum_has(a, d->enum_values[i], strlen(d->enum_values[i])))
            og_buf_printf(&b, "%s%s", b.len ? ", " : "", d->enum_values[i]);
    og_buf_cstr(&b);
    return (char *)b.data;
}

static uint64_t iface_id(const og_catalog *c, const char *name)
{
    const og_cat_type *t = name ? og_catalog_interface(c, name) : NULL;
    return t ? t->id : 0;
}

static uint64_t embed_source_id(const og_cat_type *t, const og_cat_prop *p)
{
    if (!p->embed_source) return 0;
    const og_cat_prop *s = og_cat_type_prop(t, p->embed_source, NULL);
    return s ? s->id : UINT64_MAX;
}

static void plan_properties(planner *pl, const og_cat_type *a, const og_cat_type *d)
{
    for (size_t i = 0; i < d->nprops; i++) {
        const og_cat_prop *p = &d->props[i];
        const og_cat_prop *e = NULL;
        for (size_t j = 0; j < a->nprops; j++)
            if (a->props[j].id == p->id) e = &a->props[j];
        char tn[300];
        if (!e) {
            if (p->nullable) {
                og_migration_step *s = push_step(pl, OG_STEP_ADD_PROPERTY, d->kind, d->name, p->name);
                if (s && !(s->detail = og_sdup(og_cat_prop_type_name(p, tn, sizeof tn)))) pl->st = OG_ERR_NOMEM;
            } else {
                unsupported(pl, d->kind, d->name, p->name, "OG-MF-103",
                            "adding required property '%s.%s' requires a backfill and is not supported in schema migration v1 "
                            "(add it as %s? and backfill)",
                            d->name, p->name, og_cat_prop_type_name(p, tn, sizeof tn));
            }
            continue;
        }
        if (strcmp(e->name, p->name)) {
            og_migration_step *s = push_step(pl, OG_STEP_RENAME_PROPERTY, d->kind, d->name, p->name);
            if (s && (!(s->from = og_sdup(e->name)) || !(s->to = og_sdup(p->name)))) pl->st = OG_ERR_NOMEM;
        }
        char *added = enum_widening(e, p);
        if (added) {
            og_migration_step *s = push_step(pl, OG_STEP_EXTEND_ENUM, d->kind, d->name, p->name);
            if (s) s->detail = added;
            else free(added);
        } else if (!og_cat_prop_same_type(e, p)) {
            char t1[300];
            unsupported(pl, d->kind, d->name, p->name, "OG-MF-106",
                        "changing property type for '%s.%s' is not supported in schema migration v1 (%s -> %s)", d->name, p->name,
                        og_cat_prop_type_name(e, t1, sizeof t1), og_cat_prop_type_name(p, tn, sizeof tn));
        }
        if (embed_source_id(a, e) != embed_source_id(d, p) || !str_eq(e->embed_model, p->embed_model))
            unsupported(pl, d->kind, d->name, p->name, NULL,
                        "changing @embed source or model for '%s.%s' is not supported in schema migration v1; rebuild the graph "
                        "so stored vectors and their declared embedding space cannot diverge",
                        d->name, p->name);
        if (iface_id(pl->acc, e->interface) != iface_id(pl->des, p->interface))
            unsupported(pl, d->kind, d->name, p->name, NULL,
                        "changing declaration provenance for '%s.%s' is not supported in schema migration v1", d->name, p->name);
        if (!annots_eq_x(e->annots, e->n_annots, p->annots, p->n_annots, d->kind == OG_KIND_INTERFACE))
            unsupported(pl, d->kind, d->name, p->name, NULL,
                        "changing annotations beyond @description/@instruction is not supported in schema migration v1");
        if (!str_eq(e->description, p->description)) {
            og_migration_step *s = push_step(pl, OG_STEP_UPDATE_PROPERTY_METADATA, d->kind, d->name, p->name);
            if (s && !(s->detail = metadata_detail(p->description, NULL))) pl->st = OG_ERR_NOMEM;
        }
    }
    for (size_t j = 0; j < a->nprops; j++) {
        int kept = 0;
        for (size_t i = 0; i < d->nprops; i++)
            if (d->props[i].id == a->props[j].id) kept = 1;
        if (!kept) push_step(pl, OG_STEP_DROP_PROPERTY, d->kind, d->name, a->props[j].name);
    }
}

/* Identity-based key of a constraint ("index:12,src"), so renames do not look like changes. */
static char *cons_key(const og_cat_type *t, const og_cat_constraint *c)
{
    og_buf b = OG_BUF_INIT;
    og_buf_printf(&b, "%s:", og_cons_kind_name(c->kind));
    /* columns sorted by id text (order-insensitive, like the reference) */
    char **parts = calloc(c->ncols + 1, sizeof *parts);
    if (!parts) return NULL;
    for (size_t i = 0; i < c->ncols; i++) {
        int cp = c->col_props ? c->col_props[i] : OG_COL_UNRESOLVED;
        if (cp >= 0) parts[i] = fmt_dup("p%llu", (unsigned long long)t->props[cp].id);
        else parts[i] = og_sdup(cp == OG_COL_SRC ? "src" : cp == OG_COL_DST ? "dst" : cp == OG_COL_ID ? "id" : c->cols[i]);
    }
    for (size_t i = 1; i < c->ncols; i++)
        for (size_t j = i; j > 0 && parts[j - 1] && parts[j] && strcmp(parts[j - 1], parts[j]) > 0; j--) {
            char *x = parts[j];
            parts[j] = parts[j - 1];
            parts[j - 1] = x;
        }
    for (size_t i = 0; i < c->ncols; i++) {
        og_buf_printf(&b, "%s%s", i ? "," : "", parts[i] ? parts[i] : "?");
        free(parts[i]);
    }
    free(parts);
    if (c->kind == OG_CONS_RANGE) {
        for (int s = 0; s < 2; s++) {
            const og_range_bound *rb = s ? &c->max : &c->min;
            if (!rb->present) og_buf_append_str(&b, ":none");
            else if (rb->is_float) og_buf_printf(&b, ":f%.17g", rb->f);
            else og_buf_printf(&b, ":i%lld", (long long)rb->i);
        }
    }
    if (c->kind == OG_CONS_CHECK) og_buf_printf(&b, ":%s", c->pattern ? c->pattern : "");
    og_buf_cstr(&b);
    return (char *)b.data;
}

static char *cons_text(const og_cat_constraint *c)
{
    og_buf b = OG_BUF_INIT;
    og_buf_printf(&b, "@%s(", og_cons_kind_name(c->kind));
    for (size_t i = 0; i < c->ncols; i++) og_buf_printf(&b, "%s%s", i ? ", " : "", c->cols[i]);
    if (c->kind == OG_CONS_RANGE)
        og_buf_printf(&b, ", %s..%s", c->min.present ? c->min.text : "", c->max.present ? c->max.text : "");
    if (c->kind == OG_CONS_CHECK) og_buf_printf(&b, ", \"%s\"", c->pattern ? c->pattern : "");
    og_buf_append_str(&b, ")");
    og_buf_cstr(&b);
    return (char *)b.data;
}

static int key_in(char **keys, size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i] && !strcmp(keys[i], k)) return 1;
    return 0;
}

static void plan_constraints(planner *pl, const og_cat_type *a, const og_cat_type *d)
{
    char **ak = calloc(a->ncons + 1, sizeof *ak), **dk = calloc(d->ncons + 1, sizeof *dk);
    if (!ak || !dk) {
        free(ak);
        free(dk);
        pl->st = OG_ERR_NOMEM;
        return;
    }
    for (size_t i = 0; i < a->ncons; i++) ak[i] = cons_key(a, &a->cons[i]);
    for (size_t i = 0; i < d->ncons; i++) dk[i] = cons_key(d, &d->cons[i]);
    int removed = 0;
    for (size_t i = 0; i < a->ncons; i++)
        if (ak[i] && !key_in(dk, d->ncons, ak[i])) removed = 1;
    if (removed)
        unsupported(pl, d->kind, d->name, NULL, NULL, "removing constraints from '%s' is not supported in schema migration v1",
                    d->name);
    for (size_t i = 0; i < d->ncons; i++) {
        if (!dk[i] || key_in(ak, a->ncons, dk[i]) || key_in(dk, i, dk[i])) continue;
        char *txt = cons_text(&d->cons[i]);
        if (d->cons[i].kind == OG_CONS_INDEX) {
            og_migration_step *s = push_step(pl, OG_STEP_ADD_CONSTRAINT, d->kind, d->name, NULL);
            if (s) {
                s->detail = txt;
                txt = NULL;
            }
        } else {
            unsupported(pl, d->kind, d->name, NULL, NULL,
                        "adding constraint '%s' to '%s' is not supported in schema migration v1 (existing rows were never "
                        "validated against it)",
                        txt ? txt : "?", d->name);
        }
        free(txt);
    }
    for (size_t i = 0; i < a->ncons; i++) free(ak[i]);
    for (size_t i = 0; i < d->ncons; i++) free(dk[i]);
    free(ak);
    free(dk);
}

static void plan_kind(planner *pl, og_type_kind k)
{
    size_t na, nd;
    const og_cat_type *av = acc_types(pl->acc, k, &na);
    const og_cat_type *dv = acc_types(pl->des, k, &nd);
    for (size_t i = 0; i < nd; i++) {
        const og_cat_type *d = &dv[i];
        const og_cat_type *a = NULL;
        for (size_t j = 0; j < na; j++)
            if (av[j].id == d->id) a = &av[j];
        if (!a) {
            push_step(pl, OG_STEP_ADD_TYPE, k, d->name, NULL);
            continue;
        }
        if (strcmp(a->name, d->name)) {
            if (k == OG_KIND_INTERFACE) {
                unsupported(pl, k, d->name, NULL, NULL, "renaming interfaces is not supported in schema migration v1");
            } else {
                og_migration_step *s = push_step(pl, OG_STEP_RENAME_TYPE, k, d->name, NULL);
                if (s && (!(s->from = og_sdup(a->name)) || !(s->to = og_sdup(d->name)))) pl->st = OG_ERR_NOMEM;
            }
        }
        if (k == OG_KIND_NODE) {
            int same = 1;
            for (size_t x = 0; x < a->nimplements && same; x++) {
                uint64_t id = iface_id(pl->acc, a->implements[x]);
                int found = 0;
                for (size_t y = 0; y < d->nimplements; y++)
                    if (iface_id(pl->des, d->implements[y]) == id) found = 1;
                if (!found) same = 0;
            }
            for (size_t y = 0; y < d->nimplements && same; y++) {
                uint64_t id = iface_id(pl->des, d->implements[y]);
                int found = 0;
                for (size_t x = 0; x < a->nimplements; x++)
                    if (iface_id(pl->acc, a->implements[x]) == id) found = 1;
                if (!found) same = 0;
            }
            if (!same)
                unsupported(pl, k, d->name, NULL, NULL,
                            "changing implemented interfaces on node '%s' is not supported in schema migration v1", d->name);
        }
        if (k == OG_KIND_EDGE) {
            const og_cat_type *af = og_catalog_node(pl->acc, a->from), *at = og_catalog_node(pl->acc, a->to);
            const og_cat_type *df = og_catalog_node(pl->des, d->from), *dt = og_catalog_node(pl->des, d->to);
            if (!af || !at || !df || !dt || af->id != df->id || at->id != dt->id)
                unsupported(pl, k, d->name, NULL, NULL, "changing edge endpoints on '%s' is not supported in schema migration v1",
                            d->name);
            if (a->card_min != d->card_min || a->card_max != d->card_max)
                unsupported(pl, k, d->name, NULL, NULL, "changing cardinality on edge '%s' is not supported in schema migration v1",
                            d->name);
        }
        if (k != OG_KIND_INTERFACE) plan_type_metadata(pl, a, d);
        plan_properties(pl, a, d);
        if (k != OG_KIND_INTERFACE) plan_constraints(pl, a, d);
    }
    for (size_t j = 0; j < na; j++) {
        int kept = 0;
        for (size_t i = 0; i < nd; i++)
            if (dv[i].id == av[j].id) kept = 1;
        if (kept) continue;
        if (k == OG_KIND_INTERFACE)
            unsupported(pl, k, av[j].name, NULL, NULL, "removing interface '%s' is not supported in schema migration v1",
                        av[j].name);
        else push_step(pl, OG_STEP_DROP_TYPE, k, av[j].name, NULL);
    }
}

og_status og_migration_plan_build(og_migration_plan *out, const og_catalog *accepted, const char *file, const char *text,
                                  size_t len, og_diags *diags)
{
    memset(out, 0, sizeof *out);
    og_diags local = OG_DIAGS_INIT;
    og_diags *ds = diags ? diags : &local;
    og_source src;
    OG_TRY(og_source_init(&src, file, text, len));
    og_catalog *des = calloc(1, sizeof *des);
    og_status st = des ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) st = og_schema_parse(des, &src, ds);
    if (st == OG_OK) st = og_catalog_check(des, &src, ds);
    if (st == OG_OK) {
        resolver r = {accepted, des, &src, ds, 0, OG_OK};
        resolve_types(&r);
        if (!r.fatal) resolve_props(&r);
        st = r.fatal ? r.fatal : (r.errors ? OG_ERR_TYPE : OG_OK);
    }
    if (st == OG_OK) {
        des->next_id = accepted->next_id;
        st = og_catalog_assign_ids(des, accepted->next_id ? accepted->next_id : 1);
    }
    if (st == OG_OK && accepted->domain && !(des->domain = og_sdup(accepted->domain))) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && !(des->source = og_sndup(text ? text : "", text ? len : 0))) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        out->desired = des;
        des = NULL;
        planner pl = {out, 0, accepted, out->desired, OG_OK};
        plan_kind(&pl, OG_KIND_INTERFACE);
        plan_kind(&pl, OG_KIND_NODE);
        plan_kind(&pl, OG_KIND_EDGE);
        st = pl.st;
        out->supported = 1;
        for (size_t i = 0; i < out->nsteps; i++)
            if (out->steps[i].kind == OG_STEP_UNSUPPORTED) out->supported = 0;
    }
    og_diags_sort(ds);
    if (st != OG_OK && st != OG_ERR_NOMEM) {
        for (size_t i = 0; i < ds->len; i++)
            if (!ds->v[i].warning) {
                og_err(st, "%s:%u:%u: %s", ds->v[i].file ? ds->v[i].file : "<input>", ds->v[i].line, ds->v[i].col,
                       ds->v[i].message);
                break;
            }
    }
    og_catalog_free(des);
    og_source_free(&src);
    og_diags_free(&local);
    if (st != OG_OK) og_migration_plan_free(out);
    return st;
}

/* ---- rendering ----------------------------------------------------------------------------- */

og_status og_migration_step_render(og_buf *out, const og_migration_step *s)
{
    const char *kn = og_type_kind_name(s->type_kind);
    switch (s->kind) {
    case OG_STEP_UNSUPPORTED:
        if (s->code) return og_buf_printf(out, "[%s] %s", s->code, s->reason);
        return og_buf_printf(out, "%s", s->reason);
    case OG_STEP_ADD_TYPE:
    case OG_STEP_DROP_TYPE:
        return og_buf_printf(out, "%s %s %s%s", step_title(s->kind), kn, s->type_name,
                             s->kind == OG_STEP_DROP_TYPE ? (s->hard ? " (hard)" : " (soft)") : "");
    case OG_STEP_RENAME_TYPE: return og_buf_printf(out, "RenameType %s %s -> %s", kn, s->from, s->to);
    case OG_STEP_RENAME_PROPERTY: return og_buf_printf(out, "RenameProperty %s %s.%s -> %s", kn, s->type_name, s->from, s->to);
    case OG_STEP_ADD_PROPERTY: return og_buf_printf(out, "AddProperty %s %s.%s: %s", kn, s->type_name, s->property_name, s->detail);
    case OG_STEP_DROP_PROPERTY:
        return og_buf_printf(out, "DropProperty %s %s.%s%s", kn, s->type_name, s->property_name, s->hard ? " (hard)" : " (soft)");
    case OG_STEP_ADD_CONSTRAINT: return og_buf_printf(out, "AddConstraint(Index) %s %s %s", kn, s->type_name, s->detail);
    case OG_STEP_EXTEND_ENUM: return og_buf_printf(out, "ExtendEnum %s %s.%s +(%s)", kn, s->type_name, s->property_name, s->detail);
    case OG_STEP_UPDATE_TYPE_METADATA: return og_buf_printf(out, "UpdateTypeMetadata %s %s: %s", kn, s->type_name, s->detail);
    case OG_STEP_UPDATE_PROPERTY_METADATA:
        return og_buf_printf(out, "UpdatePropertyMetadata %s %s.%s: %s", kn, s->type_name, s->property_name, s->detail);
    }
    return OG_OK;
}

og_status og_migration_plan_render(og_buf *out, const og_migration_plan *p)
{
    if (!p->nsteps) return og_buf_append_str(out, "no changes (the plan is empty and would not be applied)\n");
    size_t bad = 0;
    for (size_t i = 0; i < p->nsteps; i++) bad += p->steps[i].kind == OG_STEP_UNSUPPORTED;
    if (bad) OG_TRY(og_buf_printf(out, "supported: no (%zu of %zu steps unsupported)\n", bad, p->nsteps));
    else OG_TRY(og_buf_printf(out, "supported: yes (%zu step%s)\n", p->nsteps, p->nsteps == 1 ? "" : "s"));
    for (size_t i = 0; i < p->nsteps; i++) {
        OG_TRY(og_buf_printf(out, "  %zu. %s", i + 1, p->steps[i].kind == OG_STEP_UNSUPPORTED ? "UNSUPPORTED " : ""));
        OG_TRY(og_migration_step_render(out, &p->steps[i]));
        OG_TRY(og_buf_append_byte(out, '\n'));
    }
    return OG_OK;
}

static og_status jstr(og_buf *out, const char *key, const char *v)
{
    if (!v) return OG_OK;
    OG_TRY(og_buf_printf(out, ",\"%s\":\"", key));
    for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
        if (*c == '"' || *c == '\\') OG_TRY(og_buf_printf(out, "\\%c", *c));
        else if (*c == '\n') OG_TRY(og_buf_append_str(out, "\\n"));
        else if (*c == '\r') OG_TRY(og_buf_append_str(out, "\\r"));
        else if (*c == '\t') OG_TRY(og_buf_append_str(out, "\\t"));
        else if (*c < 0x20) OG_TRY(og_buf_printf(out, "\\u%04x", *c));
        else OG_TRY(og_buf_append_byte(out, *c));
    }
    return og_buf_append_byte(out, '"');
}

og_status og_migration_plan_json(og_buf *out, const og_migration_plan *p)
{
    OG_TRY(og_buf_printf(out, "{\"supported\":%s,\"steps\":[", p->supported ? "true" : "false"));
    for (size_t i = 0; i < p->nsteps; i++) {
        const og_migration_step *s = &p->steps[i];
        OG_TRY(og_buf_printf(out, "%s{\"kind\":\"%s\",\"type_kind\":\"%s\"", i ? "," : "", og_step_kind_name(s->kind),
                             og_type_kind_name(s->type_kind)));
        OG_TRY(jstr(out, "type_name", s->type_name));
        OG_TRY(jstr(out, "property_name", s->property_name));
        OG_TRY(jstr(out, "from", s->from));
        OG_TRY(jstr(out, "to", s->to));
        OG_TRY(jstr(out, "detail", s->detail));
        OG_TRY(jstr(out, "entity", s->entity));
        OG_TRY(jstr(out, "reason", s->reason));
        OG_TRY(jstr(out, "code", s->code));
        if (s->kind == OG_STEP_DROP_TYPE || s->kind == OG_STEP_DROP_PROPERTY)
            OG_TRY(og_buf_printf(out, ",\"mode\":\"%s\"", s->hard ? "hard" : "soft"));
        OG_TRY(og_buf_append_byte(out, '}'));
    }
    return og_buf_append_str(out, "]}");
}
