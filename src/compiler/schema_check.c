/*
 * schema_check.c — the semantic pass of the schema language: turns the parser's draft into a
 * checked catalog (og_catalog_check, schema_internal.h).  Rules are those of
 * reference-language.md §1.2–§1.6 and the "Schema" part of §9; message wording follows the
 * reference compiler.  All errors are collected (the pass continues after an error wherever
 * the rest of the schema can still be checked meaningfully), each with the position of the
 * offending name and a one-line hint.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/schema_internal.h"
#include "compiler/suggest.h"
#include "util/error.h"

typedef struct checker {
    og_catalog *cat;
    const og_source *src;
    og_diags *diags;
    size_t errors;
    og_status fatal; /* NOMEM */
} checker;

static void cerr(checker *ck, size_t off, const char *hint, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void cerr(checker *ck, size_t off, const char *hint, const char *fmt, ...)
{
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ck->errors++;
    if (og_diags_add(ck->diags, OG_ERR_TYPE, ck->src, off, off + 1, hint, "%s", msg) == OG_ERR_NOMEM)
        ck->fatal = OG_ERR_NOMEM;
}

/* The reference's reserved namespace (docs/schema-language.md "Reserved names"): every name
 * starting with `_` — Lance's virtual columns (`_rowid`, `_rowaddr`, ...), the system
 * columns' spelling beside a user `id` (`__id`, `__src`, `__dst`), the search outputs
 * `_distance` and `_score` — and, on an edge, `from` and `to`, the insert fields that name
 * its endpoints.  Checked when a schema is admitted (init, schema apply, lint); a stored
 * catalog is not re-checked, so a graph keeps opening. */
static int is_reserved_system(const char *n) { return n[0] == '_'; }
static int is_reserved_edge(const char *n) { return !strcmp(n, "from") || !strcmp(n, "to"); }

static int is_numeric(og_type_id id)
{
    return id == OG_T_I32 || id == OG_T_I64 || id == OG_T_U32 || id == OG_T_U64 || id == OG_T_F32 || id == OG_T_F64;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Reserved names, list of Blob, enum sort + duplicate check, duplicate property names. */
static void check_props_basic(checker *ck, og_cat_type *t)
{
    const char *kind = og_type_kind_name(t->kind);
    for (size_t i = 0; i < t->nprops; i++) {
        og_cat_prop *p = &t->props[i];
        /* `id`, `src` and `dst` are ordinary property names: the system fields are `@id`,
         * `@src` and `@dst` in queries and the top-level "id"/"from"/"to" of a load line. */
        if (is_reserved_system(p->name))
            cerr(ck, p->off, "rename the property; names starting with `_` are reserved (system columns, `_distance`, `_score`)",
                 "property name '%s' is reserved for system columns (%s %s)", p->name, kind, t->name);
        else if (t->kind == OG_KIND_EDGE && is_reserved_edge(p->name))
            cerr(ck, p->off, "rename the property; `from` and `to` name an edge's endpoints in insert and delete",
                 "property name '%s' is reserved on edge types: it names an endpoint (%s %s)", p->name, kind, t->name);
        if (p->type.id == OG_T_LIST && p->type.elem == OG_T_BLOB)
            cerr(ck, p->off, "store one Blob per property, or a list of URIs as [String]",
                 "list of Blob is not supported (%s.%s)", t->name, p->name);
        if (p->is_enum && p->n_enum) {
            qsort(p->enum_values, p->n_enum, sizeof(char *), cmp_str);
            for (size_t j = 1; j < p->n_enum; j++)
                if (!strcmp(p->enum_values[j], p->enum_values[j - 1])) {
                    cerr(ck, p->off, "list each enum value once",
                         "enum type cannot include duplicate values ('%s' in %s.%s)", p->enum_values[j], t->name, p->name);
                    break;
                }
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t->props[j].name, p->name)) {
                cerr(ck, p->off, "each property name may appear once per type",
                     "duplicate property '%s' in %s %s", p->name, kind, t->name);
                break;
            }
    }
}

/* @rename_from: at most once, exactly one non-empty positional value, no kwargs. */
static void check_rename_from(checker *ck, const og_annotation *a, size_t n, const char *target, char **out)
{
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(a[i].name, "rename_from")) continue;
        if (seen) {
            cerr(ck, a[i].off, "keep one @rename_from(\"OldName\")", "%s declares @rename_from multiple times", target);
            continue;
        }
        seen = 1;
        const char *v = og_annot_value(&a[i]);
        size_t npos = 0, nkw = 0;
        for (size_t j = 0; j < a[i].nargs; j++) {
            if (a[i].args[j].key) nkw++;
            else npos++;
        }
        if (!v || strspn(v, " \t\r\n") == strlen(v) || npos != 1) {
            cerr(ck, a[i].off, "write @rename_from(\"OldName\")",
                 "@rename_from on %s requires exactly one non-empty positional value", target);
            continue;
        }
        if (nkw) {
            cerr(ck, a[i].off, "write @rename_from(\"OldName\")", "@rename_from on %s does not accept keyword arguments", target);
            continue;
        }
        if (out && !*out) {
            *out = og_sdup(v);
            if (!*out) ck->fatal = OG_ERR_NOMEM;
        }
    }
}

/* @description / @instruction: at most once, non-empty. */
static void check_string_annot(checker *ck, const og_annotation *a, size_t n, const char *name, const char *target,
                               char **out)
{
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(a[i].name, name)) continue;
        if (seen) {
            cerr(ck, a[i].off, "keep a single one", "%s declares @%s multiple times", target, name);
            continue;
        }
        seen = 1;
        const char *v = og_annot_value(&a[i]);
        if (!v || strspn(v, " \t\r\n") == strlen(v)) {
            cerr(ck, a[i].off, "give it text, e.g. @description(\"what this is\")", "@%s on %s requires a non-empty value", name,
                 target);
            continue;
        }
        if (out && !*out) {
            *out = og_sdup(v);
            if (!*out) ck->fatal = OG_ERR_NOMEM;
        }
    }
}

/* Edit distance of two short names (suggest.h). */
static size_t name_distance(const char *a, const char *b) { return og_typo_distance(a, b); }

/* Every annotation the schema language knows (docs/reference.md "Annotations").  Anything
 * else is a typo more often than not — `@kye` would leave a type silently unkeyed — so an
 * unknown annotation is an error that names the nearest known one. */
static const char *const known_annots[] = {"key", "unique", "index", "range", "check", "card", "embed",
                                           "description", "instruction", "rename_from"};

static void check_unknown_annots(checker *ck, const og_annotation *a, size_t n, const char *target)
{
    for (size_t i = 0; i < n; i++) {
        const char *best = NULL;
        size_t bd = 99;
        int known = 0;
        for (size_t k = 0; k < sizeof known_annots / sizeof known_annots[0]; k++) {
            if (!strcmp(a[i].name, known_annots[k])) known = 1;
            size_t d = name_distance(a[i].name, known_annots[k]);
            if (d < bd) {
                bd = d;
                best = known_annots[k];
            }
        }
        if (known) continue;
        char hint[200];
        size_t len = strlen(a[i].name);
        if (best && (bd <= 2 && bd < len))
            snprintf(hint, sizeof hint, "did you mean @%s?", best);
        else
            snprintf(hint, sizeof hint, "annotations are @key, @unique, @index, @range, @check, @card, @embed, @description, "
                                        "@instruction and @rename_from; put other notes in @description(\"...\")");
        cerr(ck, a[i].off, hint, "unknown annotation @%s on %s", a[i].name, target);
    }
}

static int is_known_prop_annot(const char *n)
{
    return !strcmp(n, "key") || !strcmp(n, "unique") || !strcmp(n, "index") || !strcmp(n, "embed") ||
           !strcmp(n, "description") || !strcmp(n, "rename_from") || !strcmp(n, "instruction");
}

/* Drops the known annotations, keeping unknown ones as metadata (source order). */
static void strip_known(og_annotation *a, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (is_known_prop_annot(a[i].name)) og_annotation_clear(&a[i]);
        else a[k++] = a[i];
    }
    for (size_t i = k; i < *n; i++) memset(&a[i], 0, sizeof a[i]);
    *n = k;
}

static void check_type_annots(checker *ck, og_cat_type *t)
{
    char target[300];
    snprintf(target, sizeof target, "%s %s", og_type_kind_name(t->kind), t->name);
    check_unknown_annots(ck, t->annots, t->n_annots, target);
    check_rename_from(ck, t->annots, t->n_annots, target, &t->rename_from);
    for (size_t i = 0; i < t->n_annots; i++) {
        const char *n = t->annots[i].name;
        if (!strcmp(n, "key") || !strcmp(n, "unique") || !strcmp(n, "index") || !strcmp(n, "embed")) {
            if (t->kind == OG_KIND_EDGE)
                cerr(ck, t->annots[i].off, "edges take @unique/@index in their body: edge E: A -> B { @unique(src, dst) }",
                     "@%s is not supported on edges (edge %s)", n, t->name);
            else
                cerr(ck, t->annots[i].off, "write it on a property (`slug: String @key`) or in the body (`@key(slug)`)",
                     "@%s is only supported on node properties or as body constraint (node %s)", n, t->name);
        }
    }
    check_string_annot(ck, t->annots, t->n_annots, "description", target, &t->description);
    check_string_annot(ck, t->annots, t->n_annots, "instruction", target, &t->instruction);
    size_t k = 0;
    for (size_t i = 0; i < t->n_annots; i++) {
        const char *n = t->annots[i].name;
        if (!strcmp(n, "description") || !strcmp(n, "instruction") || !strcmp(n, "rename_from") || !strcmp(n, "key") ||
            !strcmp(n, "unique") || !strcmp(n, "index") || !strcmp(n, "embed"))
            og_annotation_clear(&t->annots[i]);
        else t->annots[k++] = t->annots[i];
    }
    t->n_annots = k;
}

static og_status add_constraint(og_cat_type *t, og_cons_kind kind, const char *col, size_t off, int from_interface_prop)
{
    og_cat_constraint *nc = realloc(t->cons, (t->ncons + 1) * sizeof *nc);
    if (!nc) return og_err(OG_ERR_NOMEM, "out of memory");
    t->cons = nc;
    og_cat_constraint *c = &t->cons[t->ncons];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->from_property = 1;
    (void)from_interface_prop;
    c->off = off;
    c->cols = calloc(1, sizeof(char *));
    if (!c->cols) return og_err(OG_ERR_NOMEM, "out of memory");
    c->cols[0] = og_sdup(col);
    if (!c->cols[0]) {
        free(c->cols);
        c->cols = NULL;
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    c->ncols = 1;
    t->ncons++;
    return OG_OK;
}

/* Property-level @key/@unique/@index of props[from..to) -> body constraints. */
static void desugar(checker *ck, og_cat_type *t, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        og_cat_prop *p = &t->props[i];
        for (size_t j = 0; j < p->n_annots; j++) {
            const og_annotation *a = &p->annots[j];
            og_cons_kind k;
            if (!strcmp(a->name, "key")) k = OG_CONS_KEY;
            else if (!strcmp(a->name, "unique")) k = OG_CONS_UNIQUE;
            else if (!strcmp(a->name, "index")) k = OG_CONS_INDEX;
            else continue;
            if (a->has_parens) continue; /* rejected in check_prop_annots */
            if (add_constraint(t, k, p->name, a->off, p->interface != NULL) != OG_OK) ck->fatal = OG_ERR_NOMEM;
        }
    }
}

/* Property annotations (placement, arity, @embed), then keep unknown ones as metadata. */
static void check_prop_annots(checker *ck, og_cat_type *t, og_cat_prop *p)
{
    char target[300];
    snprintf(target, sizeof target, "property %s.%s", t->name, p->name);
    check_unknown_annots(ck, p->annots, p->n_annots, target);
    int is_edge = t->kind == OG_KIND_EDGE;
    int is_list = p->type.id == OG_T_LIST, is_vec = p->type.id == OG_T_VECTOR, is_blob = p->type.id == OG_T_BLOB;
    check_string_annot(ck, p->annots, p->n_annots, "description", target, &p->description);
    check_rename_from(ck, p->annots, p->n_annots, target, &p->rename_from);
    int seen_key = 0, seen_unique = 0, seen_index = 0, seen_embed = 0;
    for (size_t i = 0; i < p->n_annots; i++) {
        const og_annotation *a = &p->annots[i];
        const char *n = a->name;
        int kui = !strcmp(n, "key") || !strcmp(n, "unique") || !strcmp(n, "index");
        int is_embed = !strcmp(n, "embed");
        if (is_list && (kui || is_embed)) {
            cerr(ck, a->off, "lists cannot be keyed, unique, indexed or embedded", "@%s is not supported on list property %s.%s",
                 n, t->name, p->name);
            continue;
        }
        if (is_vec && (!strcmp(n, "key") || !strcmp(n, "unique"))) {
            cerr(ck, a->off, "vectors can only be @index'ed (ANN) and @embed'ed", "@%s is not supported on vector property %s.%s",
                 n, t->name, p->name);
            continue;
        }
        if (is_blob && (kui || is_embed)) {
            cerr(ck, a->off, "Blob properties take no constraints", "@%s is not supported on blob property %s.%s", n, t->name,
                 p->name);
            continue;
        }
        if (!strcmp(n, "instruction")) {
            cerr(ck, a->off, "use @description on properties; @instruction goes on the node or edge",
                 "@instruction is only supported on node and edge types (property %s.%s)", t->name, p->name);
            continue;
        }
        if (is_edge && (!strcmp(n, "key") || is_embed)) {
            cerr(ck, a->off, "edges have no @key and no @embed; their id is caller-supplied or generated",
                 "@%s is not supported on edge properties (edge %s.%s)", n, t->name, p->name);
            continue;
        }
        if (kui) {
            int *seen = !strcmp(n, "key") ? &seen_key : (!strcmp(n, "unique") ? &seen_unique : &seen_index);
            if (a->has_parens) {
                cerr(ck, a->off, "write the bare annotation, e.g. `name: String @unique`", "@%s on %s.%s does not accept a value",
                     n, t->name, p->name);
                continue;
            }
            if (*seen) {
                cerr(ck, a->off, "write it once", "property %s.%s declares @%s multiple times", t->name, p->name, n);
                continue;
            }
            *seen = 1;
        }
        if (is_embed) {
            if (seen_embed) {
                cerr(ck, a->off, "write it once", "property %s.%s declares @embed multiple times", t->name, p->name);
                continue;
            }
            seen_embed = 1;
            if (!is_vec) {
                cerr(ck, a->off, "@embed goes on a Vector(N) property: vec: Vector(768) @embed(\"text\")",
                     "@embed is only supported on vector properties (%s.%s)", t->name, p->name);
                continue;
            }
            const char *srcp = og_annot_value(a);
            if (!srcp) {
                cerr(ck, a->off, "name the String property to embed: @embed(\"text\")",
                     "@embed on %s.%s requires a source property name", t->name, p->name);
                continue;
            }
            if (strspn(srcp, " \t\r\n") == strlen(srcp)) {
                cerr(ck, a->off, "name the String property to embed: @embed(\"text\")",
                     "@embed on %s.%s requires a non-empty source property name", t->name, p->name);
                continue;
            }
            const og_cat_prop *sp = og_cat_type_prop(t, srcp, NULL);
            if (!sp) {
                cerr(ck, a->off, "the source must be a String property of the same node",
                     "@embed on %s.%s references unknown source property %s", t->name, p->name, srcp);
                continue;
            }
            if (sp->type.id != OG_T_STRING) {
                cerr(ck, a->off, "the source must be a String property of the same node",
                     "@embed source property %s.%s must be String", t->name, srcp);
                continue;
            }
            int bad = 0;
            const char *model = NULL;
            for (size_t j = 0; j < a->nargs; j++) {
                if (!a->args[j].key) continue;
                if (strcmp(a->args[j].key, "model")) {
                    cerr(ck, a->off, "the only keyword argument is model=\"...\"",
                         "@embed on %s.%s has unknown argument '%s=' (only 'model' is supported)", t->name, p->name,
                         a->args[j].key);
                    bad = 1;
                } else {
                    model = a->args[j].text;
                }
            }
            if (bad) continue;
            p->embed_source = og_sdup(srcp);
            p->embed_model = og_sdup(model);
            if (!p->embed_source || (model && !p->embed_model)) ck->fatal = OG_ERR_NOMEM;
        }
    }
}

/* Interface expansion for node t (props[0..nown) are its own). */
static void expand_interfaces(checker *ck, og_cat_type *t)
{
    /* dedupe implements (keep first occurrence) */
    size_t k = 0;
    for (size_t i = 0; i < t->nimplements; i++) {
        int dup = 0;
        for (size_t j = 0; j < k; j++)
            if (!strcmp(t->implements[j], t->implements[i])) dup = 1;
        if (dup) free(t->implements[i]);
        else t->implements[k++] = t->implements[i];
    }
    t->nimplements = k;
    for (size_t i = 0; i < t->nimplements; i++) {
        const og_cat_type *iface = og_catalog_interface(ck->cat, t->implements[i]);
        if (!iface) {
            const char *hint = og_catalog_node(ck->cat, t->implements[i])
                                   ? "only interfaces can be implemented; this is a node type"
                                   : "declare `interface Name { ... }` or fix the spelling";
            cerr(ck, t->off, hint, "node %s implements unknown interface '%s'", t->name, t->implements[i]);
            continue;
        }
        for (size_t j = 0; j < iface->nprops; j++) {
            const og_cat_prop *ip = &iface->props[j];
            size_t at;
            const og_cat_prop *existing = og_cat_type_prop(t, ip->name, &at);
            if (existing) {
                if (!og_cat_prop_same_type(existing, ip)) {
                    char a[200], b[200];
                    cerr(ck, existing->interface ? t->off : existing->off,
                         "declare the property with exactly the interface's type (nullability, list-ness and enum set included)",
                         "node %s property '%s' has type %s but interface %s declares it as %s", t->name, ip->name,
                         og_cat_prop_type_name(existing, a, sizeof a), iface->name, og_cat_prop_type_name(ip, b, sizeof b));
                }
                continue;
            }
            og_cat_prop *np = realloc(t->props, (t->nprops + 1) * sizeof *np);
            if (!np) {
                ck->fatal = OG_ERR_NOMEM;
                return;
            }
            t->props = np;
            og_cat_prop *dst = &t->props[t->nprops];
            if (og_cat_prop_copy(dst, ip) != OG_OK) {
                t->nprops++;
                ck->fatal = OG_ERR_NOMEM;
                return;
            }
            t->nprops++;
            dst->id = 0;
            free(dst->interface);
            dst->interface = og_sdup(iface->name);
            if (!dst->interface) ck->fatal = OG_ERR_NOMEM;
            desugar(ck, t, t->nprops - 1, t->nprops);
        }
    }
}

static og_index_kind intent_for(const og_cat_prop *p)
{
    if (p->is_enum) return OG_INDEX_BTREE;
    switch (p->type.id) {
    case OG_T_STRING: return OG_INDEX_INVERTED;
    case OG_T_VECTOR: return OG_INDEX_VECTOR;
    case OG_T_LIST:
    case OG_T_BLOB:
    case OG_T_NULL: return OG_INDEX_NONE;
    default: return OG_INDEX_BTREE;
    }
}

static void check_constraints(checker *ck, og_cat_type *t)
{
    int is_edge = t->kind == OG_KIND_EDGE;
    int nkeys = 0;
    for (size_t ci = 0; ci < t->ncons; ci++) {
        og_cat_constraint *c = &t->cons[ci];
        const char *cn = og_cons_kind_name(c->kind);
        if (c->ncols) {
            c->col_props = calloc(c->ncols, sizeof *c->col_props);
            if (!c->col_props) {
                ck->fatal = OG_ERR_NOMEM;
                return;
            }
        }
        if (is_edge && (c->kind == OG_CONS_RANGE || c->kind == OG_CONS_CHECK)) {
            cerr(ck, c->off, "value constraints apply to node properties only",
                 "@%s constraint is not supported on edges (edge %s)", cn, t->name);
            for (size_t j = 0; j < c->ncols; j++) c->col_props[j] = OG_COL_UNRESOLVED;
            continue;
        }
        if (c->kind == OG_CONS_KEY && ++nkeys > 1)
            cerr(ck, c->off, "combine them into one composite key: @key(a, b)",
                 "%s type %s has multiple @key constraints; only one is supported", is_edge ? "edge" : "node", t->name);
        int has_src = 0, has_dst = 0;
        for (size_t j = 0; j < c->ncols; j++) {
            const char *col = c->cols[j];
            c->col_props[j] = OG_COL_UNRESOLVED;
            /* `@src`/`@dst` name the endpoints; a bare `src`/`dst` does too unless the edge
             * has a property of that name.  Normalized to the bare spelling when unambiguous,
             * so catalogs of edges without such properties read as before. */
            int sys = !strcmp(col, "@src") ? OG_COL_SRC : !strcmp(col, "@dst") ? OG_COL_DST : 0;
            if (!sys && is_edge && (!strcmp(col, "src") || !strcmp(col, "dst")) && !og_cat_type_prop(t, col, NULL))
                sys = col[0] == 's' ? OG_COL_SRC : OG_COL_DST;
            if (sys && (!is_edge || !(c->kind == OG_CONS_UNIQUE || c->kind == OG_CONS_INDEX || c->kind == OG_CONS_KEY))) {
                cerr(ck, c->off, "@src and @dst are an edge's endpoints, in @key, @unique or @index",
                     "@%s on %s cannot name %s", cn, t->name, sys == OG_COL_SRC ? "@src" : "@dst");
                continue;
            }
            if (sys) {
                const char *bare = sys == OG_COL_SRC ? "src" : "dst";
                const char *norm = og_cat_type_prop(t, bare, NULL) ? (sys == OG_COL_SRC ? "@src" : "@dst") : bare;
                if (strcmp(col, norm)) {
                    char *d = og_sdup(norm);
                    if (!d) {
                        ck->fatal = OG_ERR_NOMEM;
                        return;
                    }
                    free(c->cols[j]);
                    c->cols[j] = d;
                }
                int dup = 0;
                for (size_t k = 0; k < j; k++) dup |= c->col_props[k] == sys;
                if (dup) cerr(ck, c->off, "name each column once", "@%s on %s lists @%s more than once", cn, t->name, bare);
                c->col_props[j] = sys;
                has_src |= sys == OG_COL_SRC;
                has_dst |= sys == OG_COL_DST;
                continue;
            }
            for (size_t k = 0; k < j; k++)
                if (!strcmp(c->cols[k], col)) {
                    cerr(ck, c->off, "name each property once", "@%s on %s lists property '%s' more than once", cn, t->name, col);
                    break;
                }
            size_t pi;
            const og_cat_prop *p = og_cat_type_prop(t, col, &pi);
            if (!p) {
                cerr(ck, c->off, is_edge ? "name a property of this edge (or src / dst)" : "name a property declared on this node",
                     "@%s on %s references unknown property '%s'", cn, t->name, col);
                continue;
            }
            c->col_props[j] = (int)pi;
            char tn[200];
            switch (c->kind) {
            case OG_CONS_KEY:
                if (p->nullable)
                    cerr(ck, c->off, "key properties are required: drop the '?'", "@key property %s.%s cannot be nullable", t->name, col);
                else if (p->type.id == OG_T_LIST)
                    cerr(ck, c->off, "keys are scalar", "@key is not supported on list property %s.%s", t->name, col);
                else if (p->type.id == OG_T_VECTOR)
                    cerr(ck, c->off, "keys are scalar", "@key is not supported on vector property %s.%s", t->name, col);
                else if (p->type.id == OG_T_BLOB)
                    cerr(ck, c->off, "keys are scalar", "@key is not supported on blob property %s.%s", t->name, col);
                break;
            case OG_CONS_UNIQUE:
            case OG_CONS_INDEX:
                if (p->type.id == OG_T_BLOB)
                    cerr(ck, c->off, "Blob properties take no constraints", "@%s is not supported on blob property %s.%s", cn,
                         t->name, col);
                break;
            case OG_CONS_RANGE:
                if (!is_numeric(p->type.id))
                    cerr(ck, c->off, "@range applies to I32 I64 U32 U64 F32 F64 properties",
                         "@range on %s.%s requires a numeric type, got %s", t->name, col, og_cat_prop_type_name(p, tn, sizeof tn));
                break;
            case OG_CONS_CHECK:
                if (p->type.id != OG_T_STRING)
                    cerr(ck, c->off, "@check applies to String properties",
                         "@check on %s.%s requires String type, got %s", t->name, col, og_cat_prop_type_name(p, tn, sizeof tn));
                break;
            }
        }
        /* a keyed edge: identified by its endpoints (and scalar properties), so the same
         * edge loaded or merged twice is one edge (docs/schema-language.md) */
        if (is_edge && c->kind == OG_CONS_KEY && (!has_src || !has_dst))
            cerr(ck, c->off, "write @key(@src, @dst) or @key(@src, @dst, prop)",
                 "an edge key must include both @src and @dst (edge %s)", t->name);
        if (c->kind == OG_CONS_CHECK) {
            char msg[300];
            if (og_check_compile(c, msg, sizeof msg) != OG_OK)
                cerr(ck, c->off, "the pattern is a PCRE2 regular expression (see docs/schema-language.md)",
                     "@check on %s.%s has an invalid pattern: %s", t->name, c->ncols ? c->cols[0] : "?", msg);
        }
    }
}

/* Index intents, is_key, key_props. */
static void derive(checker *ck, og_cat_type *t)
{
    for (size_t ci = 0; ci < t->ncons; ci++) {
        og_cat_constraint *c = &t->cons[ci];
        if (!c->col_props) continue;
        if ((c->kind == OG_CONS_INDEX || c->kind == OG_CONS_KEY) && c->ncols == 1 && c->col_props[0] >= 0) {
            og_cat_prop *p = &t->props[c->col_props[0]];
            p->index = intent_for(p);
        }
        if (c->kind == OG_CONS_KEY && !t->key_props && t->kind == OG_KIND_NODE) {
            t->key_props = calloc(c->ncols ? c->ncols : 1, sizeof *t->key_props);
            if (!t->key_props) {
                ck->fatal = OG_ERR_NOMEM;
                return;
            }
            for (size_t j = 0; j < c->ncols; j++)
                if (c->col_props[j] >= 0) {
                    t->key_props[t->nkey++] = (size_t)c->col_props[j];
                    t->props[c->col_props[j]].is_key = 1;
                }
        }
    }
}

static void check_names(checker *ck)
{
    og_catalog *cat = ck->cat;
    for (size_t i = 0; i < cat->ninterfaces; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(cat->interfaces[i].name, cat->interfaces[j].name)) {
                cerr(ck, cat->interfaces[i].off, "interface names must be unique", "duplicate interface: %s", cat->interfaces[i].name);
                break;
            }
    for (size_t i = 0; i < cat->nnodes; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(cat->nodes[i].name, cat->nodes[j].name)) {
                cerr(ck, cat->nodes[i].off, "node type names must be unique", "duplicate node type: %s", cat->nodes[i].name);
                break;
            }
    for (size_t i = 0; i < cat->nedges; i++)
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(cat->edges[i].name, cat->edges[j].name)) {
                cerr(ck, cat->edges[i].off, "edge type names must be unique", "duplicate edge type: %s", cat->edges[i].name);
                break;
            }
            if (!strcasecmp(cat->edges[i].name, cat->edges[j].name)) {
                cerr(ck, cat->edges[i].off, "queries resolve edge words case-insensitively; rename one of them",
                     "edge name collision after case folding: '%s' conflicts with '%s'", cat->edges[i].name, cat->edges[j].name);
                break;
            }
        }
}

static void check_endpoints(checker *ck, og_cat_type *e)
{
    for (int side = 0; side < 2; side++) {
        const char *n = side ? e->to : e->from;
        const og_cat_type *nt = og_catalog_node(ck->cat, n);
        if (nt) {
            size_t idx = (size_t)(nt - ck->cat->nodes);
            if (side) e->to_node = idx;
            else e->from_node = idx;
            continue;
        }
        const char *near = og_suggest_node(ck->cat, n);
        char guess[96];
        if (near) snprintf(guess, sizeof guess, "did you mean `%s`?", near);
        const char *hint = og_catalog_interface(ck->cat, n) ? "edge endpoints must be node types; interfaces are not queryable types"
                           : near ? guess
                                  : "declare `node Name { ... }` or fix the spelling";
        cerr(ck, e->off, hint, "edge %s references unknown %s type: %s", e->name, side ? "target" : "source", n);
        if (side) e->to_node = SIZE_MAX;
        else e->from_node = SIZE_MAX;
    }
}

og_status og_catalog_check(og_catalog *cat, const og_source *src, og_diags *diags)
{
    checker ck = {cat, src, diags, 0, OG_OK};
    check_names(&ck);
    for (size_t i = 0; i < cat->ninterfaces && !ck.fatal; i++) {
        og_cat_type *t = &cat->interfaces[i];
        check_props_basic(&ck, t);
        for (size_t j = 0; j < t->nprops; j++) {
            char target[300];
            snprintf(target, sizeof target, "property %s.%s", t->name, t->props[j].name);
            check_rename_from(&ck, t->props[j].annots, t->props[j].n_annots, target, &t->props[j].rename_from);
        }
    }
    for (size_t i = 0; i < cat->nnodes && !ck.fatal; i++) {
        og_cat_type *t = &cat->nodes[i];
        check_type_annots(&ck, t);
        check_props_basic(&ck, t);
        desugar(&ck, t, 0, t->nprops);
        expand_interfaces(&ck, t);
        for (size_t j = 0; j < t->nprops && !ck.fatal; j++) check_prop_annots(&ck, t, &t->props[j]);
        check_constraints(&ck, t);
        derive(&ck, t);
    }
    for (size_t i = 0; i < cat->nedges && !ck.fatal; i++) {
        og_cat_type *t = &cat->edges[i];
        check_endpoints(&ck, t);
        check_type_annots(&ck, t);
        check_props_basic(&ck, t);
        desugar(&ck, t, 0, t->nprops);
        for (size_t j = 0; j < t->nprops && !ck.fatal; j++) check_prop_annots(&ck, t, &t->props[j]);
        check_constraints(&ck, t);
        derive(&ck, t);
    }
    /* interface props: @description/@rename_from become fields; every other annotation
     * (@key/@unique/@index/@embed included) stays in annots — they are the contract nodes
     * copied at expansion, and the migration planner compares them. */
    for (size_t i = 0; i < cat->ninterfaces && !ck.fatal; i++) {
        og_cat_type *t = &cat->interfaces[i];
        for (size_t j = 0; j < t->nprops; j++) {
            og_cat_prop *p = &t->props[j];
            const og_annotation *d = og_annot_find(p->annots, p->n_annots, "description");
            if (d && og_annot_value(d) && !p->description) p->description = og_sdup(og_annot_value(d));
            size_t k = 0;
            for (size_t a = 0; a < p->n_annots; a++) {
                if (!strcmp(p->annots[a].name, "description") || !strcmp(p->annots[a].name, "rename_from"))
                    og_annotation_clear(&p->annots[a]);
                else p->annots[k++] = p->annots[a];
            }
            p->n_annots = k;
        }
    }
    /* node and edge props: known annotations are now fields/constraints; unknown ones stay */
    for (size_t i = 0; i < cat->nnodes; i++)
        for (size_t j = 0; j < cat->nodes[i].nprops; j++) strip_known(cat->nodes[i].props[j].annots, &cat->nodes[i].props[j].n_annots);
    for (size_t i = 0; i < cat->nedges; i++)
        for (size_t j = 0; j < cat->edges[i].nprops; j++) strip_known(cat->edges[i].props[j].annots, &cat->edges[i].props[j].n_annots);
    if (ck.fatal) return ck.fatal;
    return ck.errors ? OG_ERR_TYPE : OG_OK;
}
