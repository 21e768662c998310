/*
 * catalog.c — the resolved schema catalog (catalog.h): memory management, lookups, the
 * canonical key id, and the semantic check that turns a parsed draft (schema_parse.c) into a
 * checked catalog — interface expansion with conflict checks, annotation and constraint
 * placement rules (§1.4, §1.5), endpoint resolution, case-insensitive edge-name uniqueness,
 * reserved names, index intents, @check regex compilation (PCRE2), identity allocation.
 *
 * Error messages follow the reference compiler's wording where it has one (so users moving
 * between the two recognise them); each carries the position of the offending name.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/schema_internal.h"
#include "util/error.h"

/* ---- helpers ------------------------------------------------------------------------------ */

char *og_sndup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *og_sdup(const char *s) { return s ? og_sndup(s, strlen(s)) : NULL; }

og_status og_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return OG_OK;
    size_t nc = *cap ? *cap * 2 : 4;
    while (nc <= n) nc *= 2;
    void *p = realloc(*arr, nc * elem);
    if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
    memset((char *)p + *cap * elem, 0, (nc - *cap) * elem);
    *arr = p;
    *cap = nc;
    return OG_OK;
}

void og_annotation_clear(og_annotation *a)
{
    free(a->name);
    for (size_t i = 0; i < a->nargs; i++) {
        free(a->args[i].key);
        free(a->args[i].text);
    }
    free(a->args);
    memset(a, 0, sizeof *a);
}

void og_cat_prop_clear(og_cat_prop *p)
{
    free(p->name);
    for (size_t i = 0; i < p->n_enum; i++) free(p->enum_values[i]);
    free(p->enum_values);
    free(p->embed_source);
    free(p->embed_model);
    free(p->description);
    free(p->rename_from);
    free(p->interface);
    for (size_t i = 0; i < p->n_annots; i++) og_annotation_clear(&p->annots[i]);
    free(p->annots);
    memset(p, 0, sizeof *p);
}

void og_cat_constraint_clear(og_cat_constraint *c)
{
    for (size_t i = 0; i < c->ncols; i++) free(c->cols[i]);
    free(c->cols);
    free(c->col_props);
    free(c->min.text);
    free(c->max.text);
    free(c->pattern);
    if (c->regex) pcre2_code_free((pcre2_code *)c->regex);
    memset(c, 0, sizeof *c);
}

void og_cat_type_clear(og_cat_type *t)
{
    free(t->name);
    for (size_t i = 0; i < t->nprops; i++) og_cat_prop_clear(&t->props[i]);
    free(t->props);
    for (size_t i = 0; i < t->ncons; i++) og_cat_constraint_clear(&t->cons[i]);
    free(t->cons);
    free(t->key_props);
    for (size_t i = 0; i < t->nimplements; i++) free(t->implements[i]);
    free(t->implements);
    free(t->from);
    free(t->to);
    free(t->description);
    free(t->instruction);
    free(t->rename_from);
    for (size_t i = 0; i < t->n_annots; i++) og_annotation_clear(&t->annots[i]);
    free(t->annots);
    memset(t, 0, sizeof *t);
}

void og_catalog_free(og_catalog *cat)
{
    if (!cat) return;
    for (size_t i = 0; i < cat->ninterfaces; i++) og_cat_type_clear(&cat->interfaces[i]);
    for (size_t i = 0; i < cat->nnodes; i++) og_cat_type_clear(&cat->nodes[i]);
    for (size_t i = 0; i < cat->nedges; i++) og_cat_type_clear(&cat->edges[i]);
    free(cat->interfaces);
    free(cat->nodes);
    free(cat->edges);
    free(cat->domain);
    free(cat->source);
    free(cat);
}

og_status og_annotation_copy(og_annotation *dst, const og_annotation *src)
{
    memset(dst, 0, sizeof *dst);
    dst->name = og_sdup(src->name);
    dst->has_parens = src->has_parens;
    dst->off = src->off;
    if (!dst->name) return og_err(OG_ERR_NOMEM, "out of memory");
    if (src->nargs) {
        dst->args = calloc(src->nargs, sizeof *dst->args);
        if (!dst->args) return og_err(OG_ERR_NOMEM, "out of memory");
        dst->nargs = src->nargs;
        for (size_t i = 0; i < src->nargs; i++) {
            dst->args[i].kind = src->args[i].kind;
            dst->args[i].key = og_sdup(src->args[i].key);
            dst->args[i].text = og_sdup(src->args[i].text);
            if (!dst->args[i].text || (src->args[i].key && !dst->args[i].key))
                return og_err(OG_ERR_NOMEM, "out of memory");
        }
    }
    return OG_OK;
}

og_status og_cat_prop_copy(og_cat_prop *dst, const og_cat_prop *src)
{
    *dst = *src;
    dst->name = og_sdup(src->name);
    dst->embed_source = og_sdup(src->embed_source);
    dst->embed_model = og_sdup(src->embed_model);
    dst->description = og_sdup(src->description);
    dst->rename_from = og_sdup(src->rename_from);
    dst->interface = og_sdup(src->interface);
    dst->enum_values = NULL;
    dst->n_enum = 0;
    dst->annots = NULL;
    dst->n_annots = 0;
    if (!dst->name) return og_err(OG_ERR_NOMEM, "out of memory");
    if (src->n_enum) {
        dst->enum_values = calloc(src->n_enum, sizeof(char *));
        if (!dst->enum_values) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < src->n_enum; i++) {
            dst->enum_values[i] = og_sdup(src->enum_values[i]);
            if (!dst->enum_values[i]) return og_err(OG_ERR_NOMEM, "out of memory");
            dst->n_enum = i + 1;
        }
    }
    if (src->n_annots) {
        dst->annots = calloc(src->n_annots, sizeof *dst->annots);
        if (!dst->annots) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < src->n_annots; i++) {
            dst->n_annots = i + 1;
            OG_TRY(og_annotation_copy(&dst->annots[i], &src->annots[i]));
        }
    }
    return OG_OK;
}

const og_annotation *og_annot_find(const og_annotation *a, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].name && strcmp(a[i].name, name) == 0) return &a[i];
    return NULL;
}

const char *og_annot_value(const og_annotation *a)
{
    for (size_t i = 0; i < a->nargs; i++)
        if (!a->args[i].key) return a->args[i].text;
    return NULL;
}

int og_cat_prop_same_type(const og_cat_prop *a, const og_cat_prop *b)
{
    if (!og_type_eq(a->type, b->type) || a->nullable != b->nullable || a->is_enum != b->is_enum) return 0;
    if (a->is_enum) {
        if (a->n_enum != b->n_enum) return 0;
        for (size_t i = 0; i < a->n_enum; i++)
            if (strcmp(a->enum_values[i], b->enum_values[i]) != 0) return 0;
    }
    return 1;
}

/* ---- names ---------------------------------------------------------------------------------- */

const char *og_index_kind_name(og_index_kind k)
{
    switch (k) {
    case OG_INDEX_BTREE: return "btree";
    case OG_INDEX_INVERTED: return "inverted";
    case OG_INDEX_VECTOR: return "vector";
    default: return "none";
    }
}

const char *og_cons_kind_name(og_cons_kind k)
{
    switch (k) {
    case OG_CONS_KEY: return "key";
    case OG_CONS_UNIQUE: return "unique";
    case OG_CONS_INDEX: return "index";
    case OG_CONS_RANGE: return "range";
    default: return "check";
    }
}

const char *og_type_kind_name(og_type_kind k)
{
    switch (k) {
    case OG_KIND_INTERFACE: return "interface";
    case OG_KIND_NODE: return "node";
    default: return "edge";
    }
}

const char *og_cat_prop_type_name(const og_cat_prop *p, char *buf, size_t cap)
{
    og_buf b = OG_BUF_INIT;
    if (p->is_enum) {
        og_buf_append_str(&b, "enum(");
        for (size_t i = 0; i < p->n_enum; i++) {
            if (i) og_buf_append_str(&b, ", ");
            og_buf_append_str(&b, p->enum_values[i]);
        }
        og_buf_append_str(&b, ")");
    } else if (p->type.id == OG_T_LIST) {
        og_buf_printf(&b, "[%s]", og_scalar_type_name(p->type.elem));
    } else if (p->type.id == OG_T_VECTOR) {
        og_buf_printf(&b, "Vector(%u)", p->type.dim);
    } else {
        og_buf_append_str(&b, og_scalar_type_name(p->type.id));
    }
    if (p->nullable) og_buf_append_str(&b, "?");
    snprintf(buf, cap, "%s", og_buf_cstr(&b));
    og_buf_free(&b);
    return buf;
}

const char *og_cat_type_table_dir(const og_cat_type *t, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s_%llu_%llu.lance", og_type_kind_name(t->kind), (unsigned long long)t->id,
             (unsigned long long)t->incarnation);
    return buf;
}

/* ---- lookups -------------------------------------------------------------------------------- */

static const og_cat_type *find_in(const og_cat_type *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].name && v[i].name[0] == name[0] && strcmp(v[i].name, name) == 0) return &v[i];
    return NULL;
}

const og_cat_type *og_catalog_node(const og_catalog *cat, const char *name)
{
    return find_in(cat->nodes, cat->nnodes, name);
}
const og_cat_type *og_catalog_interface(const og_catalog *cat, const char *name)
{
    return find_in(cat->interfaces, cat->ninterfaces, name);
}
const og_cat_type *og_catalog_edge(const og_catalog *cat, const char *name)
{
    return find_in(cat->edges, cat->nedges, name);
}

const og_cat_type *og_catalog_edge_ci(const og_catalog *cat, const char *name, size_t len)
{
    for (size_t i = 0; i < cat->nedges; i++) {
        const char *n = cat->edges[i].name;
        if (strlen(n) == len && strncasecmp(n, name, len) == 0) return &cat->edges[i];
    }
    return NULL;
}

const og_cat_type *og_catalog_type_by_id(const og_catalog *cat, uint64_t id)
{
    for (size_t i = 0; i < cat->ninterfaces; i++)
        if (cat->interfaces[i].id == id) return &cat->interfaces[i];
    for (size_t i = 0; i < cat->nnodes; i++)
        if (cat->nodes[i].id == id) return &cat->nodes[i];
    for (size_t i = 0; i < cat->nedges; i++)
        if (cat->edges[i].id == id) return &cat->edges[i];
    return NULL;
}

const og_cat_prop *og_cat_type_prop(const og_cat_type *t, const char *name, size_t *index_out)
{
    for (size_t i = 0; i < t->nprops; i++) /* the first byte first: a load looks up every field */
        if (t->props[i].name[0] == name[0] && strcmp(t->props[i].name, name) == 0) {
            if (index_out) *index_out = i;
            return &t->props[i];
        }
    return NULL;
}

const og_cat_prop *og_cat_type_prop_by_id(const og_cat_type *t, uint64_t id, size_t *index_out)
{
    for (size_t i = 0; i < t->nprops; i++)
        if (t->props[i].id == id) {
            if (index_out) *index_out = i;
            return &t->props[i];
        }
    return NULL;
}

int og_cat_type_implements(const og_cat_type *t, const char *iface)
{
    for (size_t i = 0; i < t->nimplements; i++)
        if (strcmp(t->implements[i], iface) == 0) return 1;
    return 0;
}

const og_cat_constraint *og_cat_type_key(const og_cat_type *t)
{
    for (size_t i = 0; i < t->ncons; i++)
        if (t->cons[i].kind == OG_CONS_KEY) return &t->cons[i];
    return NULL;
}

int og_cat_prop_enum_has(const og_cat_prop *p, const char *value, size_t len)
{
    size_t lo = 0, hi = p->n_enum;
    while (lo < hi) { /* values are sorted by byte order */
        size_t mid = lo + (hi - lo) / 2;
        const char *v = p->enum_values[mid];
        size_t vl = strlen(v);
        int c = memcmp(v, value, vl < len ? vl : len);
        if (c == 0) c = vl < len ? -1 : (vl > len ? 1 : 0);
        if (c == 0) return 1;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

size_t og_catalog_edges_at(const og_catalog *cat, size_t node_index, int dir, size_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < cat->nedges; i++) {
        size_t at = dir ? cat->edges[i].to_node : cat->edges[i].from_node;
        if (at == node_index) {
            if (n < cap) out[n] = i;
            n++;
        }
    }
    return n;
}

int og_check_match(const og_cat_constraint *c, const char *value, size_t len)
{
    if (!c->regex) return -1;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern((const pcre2_code *)c->regex, NULL);
    if (!md) return -1;
    int rc = pcre2_match((const pcre2_code *)c->regex, (PCRE2_SPTR)value, len, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    if (rc >= 0) return 1;
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    return -1;
}

og_status og_check_compile(og_cat_constraint *c, char *msg, size_t cap)
{
    int errcode;
    PCRE2_SIZE erroff;
    const char *pat = c->pattern ? c->pattern : "";
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, strlen(pat), PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF,
                                   &errcode, &erroff, NULL);
    if (!re) {
        PCRE2_UCHAR ebuf[256];
        pcre2_get_error_message(errcode, ebuf, sizeof ebuf);
        snprintf(msg, cap, "%s at offset %zu", (const char *)ebuf, (size_t)erroff);
        return OG_ERR_TYPE;
    }
    c->regex = re;
    return OG_OK;
}

/* ---- canonical key ids ------------------------------------------------------------------- */

/* Shortest round-trip decimal digits of v (float precision when is_f32), rendered without an
 * exponent like Rust's Display for f32/f64. */
static og_status render_float(og_buf *out, double v, int is_f32)
{
    if (!isfinite(v)) return og_err(OG_ERR_CONSTRAINT, "key value must be a finite number");
    if (v == 0) return og_buf_append_str(out, "0");
    char tmp[64];
    int maxp = is_f32 ? 9 : 17;
    for (int prec = 1; prec <= maxp; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        double back = strtod(tmp, NULL);
        if (is_f32 ? (float)back == (float)v : back == v) break;
    }
    /* tmp = [-]d.ddde[+-]xx */
    char digits[32];
    size_t nd = 0;
    const char *q = tmp;
    int neg = 0;
    if (*q == '-') {
        neg = 1;
        q++;
    }
    while (*q && *q != 'e') {
        if (*q >= '0' && *q <= '9' && nd < sizeof digits - 1) digits[nd++] = *q;
        q++;
    }
    digits[nd] = 0;
    int exp = *q == 'e' ? atoi(q + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = 0;
    if (neg) OG_TRY(og_buf_append_byte(out, '-'));
    /* value = 0.d1d2... * 10^(exp+1) */
    int point = exp + 1; /* digits before the decimal point */
    if (point <= 0) {
        OG_TRY(og_buf_append_str(out, "0."));
        for (int i = 0; i < -point; i++) OG_TRY(og_buf_append_byte(out, '0'));
        OG_TRY(og_buf_append_str(out, digits));
    } else if ((size_t)point >= nd) {
        OG_TRY(og_buf_append_str(out, digits));
        for (size_t i = nd; i < (size_t)point; i++) OG_TRY(og_buf_append_byte(out, '0'));
    } else {
        OG_TRY(og_buf_append(out, digits, (size_t)point));
        OG_TRY(og_buf_append_byte(out, '.'));
        OG_TRY(og_buf_append_str(out, digits + point));
    }
    return OG_OK;
}

og_status og_key_render_value(og_buf *out, og_type type, const og_key_value *v)
{
    switch (type.id) {
    case OG_T_BOOL: return og_buf_append_str(out, v->b ? "true" : "false");
    case OG_T_I32:
    case OG_T_I64:
    case OG_T_DATE32:
    case OG_T_DATE64: return og_buf_printf(out, "%lld", (long long)v->i);
    case OG_T_U32:
    case OG_T_U64: return og_buf_printf(out, "%llu", (unsigned long long)v->u);
    case OG_T_F32: return render_float(out, v->f, 1);
    case OG_T_F64: return render_float(out, v->f, 0);
    case OG_T_STRING: return og_buf_append(out, v->s, v->len);
    default: return og_err(OG_ERR_INVALID, "type cannot be part of a key");
    }
}

/* Compact JSON string (serde_json escaping: \" \\ \b \f \n \r \t, other controls \u00XX). */
static og_status json_str(og_buf *out, const char *s, size_t n)
{
    OG_TRY(og_buf_append_byte(out, '"'));
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': OG_TRY(og_buf_append_str(out, "\\\"")); break;
        case '\\': OG_TRY(og_buf_append_str(out, "\\\\")); break;
        case '\b': OG_TRY(og_buf_append_str(out, "\\b")); break;
        case '\f': OG_TRY(og_buf_append_str(out, "\\f")); break;
        case '\n': OG_TRY(og_buf_append_str(out, "\\n")); break;
        case '\r': OG_TRY(og_buf_append_str(out, "\\r")); break;
        case '\t': OG_TRY(og_buf_append_str(out, "\\t")); break;
        default:
            if (c < 0x20) OG_TRY(og_buf_printf(out, "\\u%04x", c));
            else OG_TRY(og_buf_append_byte(out, c));
        }
    }
    return og_buf_append_byte(out, '"');
}

og_status og_key_id(og_buf *out, const og_cat_type *t, const og_key_value *vals, size_t n)
{
    if (!t->nkey) return og_err(OG_ERR_INVALID, "type %s has no @key", t->name);
    if (n != t->nkey) return og_err(OG_ERR_INVALID, "type %s: key has %zu values, expected %zu", t->name, n, t->nkey);
    if (n == 1) {
        OG_TRY(og_key_render_value(out, t->props[t->key_props[0]].type, &vals[0]));
        og_buf_cstr(out);
        return OG_OK;
    }
    og_buf one = OG_BUF_INIT;
    og_status st = og_buf_append_byte(out, '[');
    for (size_t i = 0; st == OG_OK && i < n; i++) {
        og_buf_reset(&one);
        if (i) st = og_buf_append_byte(out, ',');
        if (st == OG_OK) st = og_key_render_value(&one, t->props[t->key_props[i]].type, &vals[i]);
        if (st == OG_OK) st = json_str(out, (const char *)one.data, one.len);
    }
    if (st == OG_OK) st = og_buf_append_byte(out, ']');
    og_buf_free(&one);
    og_buf_cstr(out);
    return st;
}

/* ---- identity ------------------------------------------------------------------------------- */

typedef struct id_ref {
    og_type_kind kind;
    const char *name;
    uint64_t owner;
    uint64_t *slot;
} id_ref;

static int cmp_type_ref(const void *a, const void *b)
{
    const id_ref *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_prop_ref(const void *a, const void *b)
{
    const id_ref *x = a, *y = b;
    if (x->owner != y->owner) return x->owner < y->owner ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_inc_ref(const void *a, const void *b)
{
    const id_ref *x = a, *y = b;
    return x->owner < y->owner ? -1 : (x->owner > y->owner ? 1 : 0);
}

static og_cat_type *type_at(og_catalog *cat, size_t i)
{
    if (i < cat->ninterfaces) return &cat->interfaces[i];
    i -= cat->ninterfaces;
    if (i < cat->nnodes) return &cat->nodes[i];
    return &cat->edges[i - cat->nnodes];
}

og_status og_catalog_assign_ids(og_catalog *cat, uint64_t first_id)
{
    size_t nt = cat->ninterfaces + cat->nnodes + cat->nedges, np = 0;
    for (size_t i = 0; i < nt; i++) np += type_at(cat, i)->nprops;
    id_ref *refs = calloc((nt > np ? nt : np) + 1, sizeof *refs);
    if (!refs) return og_err(OG_ERR_NOMEM, "out of memory");
    uint64_t next = first_id ? first_id : 1;
    size_t k = 0;
    for (size_t i = 0; i < nt; i++) {
        og_cat_type *t = type_at(cat, i);
        if (!t->id) refs[k++] = (id_ref){t->kind, t->name, 0, &t->id};
    }
    qsort(refs, k, sizeof *refs, cmp_type_ref);
    for (size_t i = 0; i < k; i++) *refs[i].slot = next++;
    k = 0;
    for (size_t i = 0; i < nt; i++) {
        og_cat_type *t = type_at(cat, i);
        for (size_t j = 0; j < t->nprops; j++)
            if (!t->props[j].id) refs[k++] = (id_ref){t->kind, t->props[j].name, t->id, &t->props[j].id};
    }
    qsort(refs, k, sizeof *refs, cmp_prop_ref);
    for (size_t i = 0; i < k; i++) *refs[i].slot = next++;
    k = 0;
    for (size_t i = 0; i < nt; i++) {
        og_cat_type *t = type_at(cat, i);
        if (t->kind != OG_KIND_INTERFACE && !t->incarnation) refs[k++] = (id_ref){t->kind, t->name, t->id, &t->incarnation};
    }
    qsort(refs, k, sizeof *refs, cmp_inc_ref);
    for (size_t i = 0; i < k; i++) *refs[i].slot = next++;
    free(refs);
    if (next > cat->next_id) cat->next_id = next;
    og_catalog_order_keys(cat);
    return OG_OK;
}

void og_catalog_order_keys(og_catalog *cat)
{
    for (size_t i = 0; i < cat->nnodes; i++) {
        og_cat_type *t = &cat->nodes[i];
        for (size_t a = 1; a < t->nkey; a++) /* insertion sort by property id */
            for (size_t b = a; b > 0 && t->props[t->key_props[b - 1]].id > t->props[t->key_props[b]].id; b--) {
                size_t tmp = t->key_props[b];
                t->key_props[b] = t->key_props[b - 1];
                t->key_props[b - 1] = tmp;
            }
    }
}
